// Types of cluster-key-slot (ioredis' own slot function; the package ships none): Redis Cluster's CRC16 key slot,
// hash tags included.
declare module 'cluster-key-slot' {
  function generate(key: string): number;
  export = generate;
}
