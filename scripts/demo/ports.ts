import { createServer } from 'node:net';

/** `preferred` if nothing listens on it (127.0.0.1), otherwise a port the OS picks. */
export async function freePort(preferred = 0): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        const chosen = typeof address === 'object' && address ? address.port : undefined;
        server.close(() => resolve(chosen));
      });
    });
  return (preferred && (await tryListen(preferred))) || (await tryListen(0))!;
}
