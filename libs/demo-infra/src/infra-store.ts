// The simulated infrastructure the demo's ops tools act on, kept in Redis so every worker (and the ops MCP server)
// sees the same world and tests can count what really ran (restart counts are executions).
import { LuaScript, type RedisClient } from '@countersign/platform';
import { infraKeys } from './infra-keys';

const RESTART = LuaScript.load(__dirname, 'restart-service-1.lua');

export type ServiceStatus = 'healthy' | 'degraded' | 'restarting' | 'down';

export interface ServiceView {
  name: string;
  status: ServiceStatus;
  replicas: number;
  restarts: number;
}

export interface VolumeView {
  name: string;
  sizeGb: number;
}

export interface InfraView {
  services: ServiceView[];
  volumes: VolumeView[];
}

const DEFAULT_SERVICES: ServiceView[] = [
  { name: 'api', status: 'healthy', replicas: 3, restarts: 0 },
  { name: 'payments', status: 'degraded', replicas: 2, restarts: 0 },
  { name: 'web', status: 'healthy', replicas: 2, restarts: 0 },
];
const DEFAULT_VOLUMES: VolumeView[] = [
  { name: 'pg-data', sizeGb: 100 },
  { name: 'scratch', sizeGb: 10 },
];

export class UnknownServiceError extends Error {
  constructor(readonly service: string) {
    super(`unknown service "${service}"`);
    this.name = this.constructor.name;
  }
}

/** Services live in one hash as `<name>:status`, `<name>:replicas`, `<name>:restarts`, so updates are single commands. */
export class InfraStore {
  private readonly keys: ReturnType<typeof infraKeys>;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.keys = infraKeys(keyPrefix);
  }

  /** Seeds the default world once per key prefix. */
  async seedDefaults(): Promise<void> {
    const first = await this.redis.set(this.keys.seeded, '1', 'NX');
    if (first !== 'OK') return;
    const services: Record<string, string> = {};
    for (const s of DEFAULT_SERVICES) {
      services[`${s.name}:status`] = s.status;
      services[`${s.name}:replicas`] = String(s.replicas);
      services[`${s.name}:restarts`] = String(s.restarts);
    }
    const volumes = Object.fromEntries(DEFAULT_VOLUMES.map((v) => [v.name, String(v.sizeGb)]));
    await this.redis.multi().hset(this.keys.services, services).hset(this.keys.volumes, volumes).exec();
  }

  async view(): Promise<InfraView> {
    const [[, services], [, volumes]] = (await this.redis
      .multi()
      .hgetall(this.keys.services)
      .hgetall(this.keys.volumes)
      .exec()) as [[null, Record<string, string>], [null, Record<string, string>]];
    const names = [...new Set(Object.keys(services).map((f) => f.slice(0, f.lastIndexOf(':'))))].sort();
    return {
      services: names.map((name) => toService(name, services)),
      volumes: Object.entries(volumes)
        .map(([name, size]) => ({ name, sizeGb: Number(size) }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  async service(name: string): Promise<ServiceView> {
    const [status, replicas, restarts] = await this.redis.hmget(
      this.keys.services,
      `${name}:status`,
      `${name}:replicas`,
      `${name}:restarts`,
    );
    if (status === null) throw new UnknownServiceError(name);
    return { name, status: status as ServiceStatus, replicas: Number(replicas), restarts: Number(restarts) };
  }

  /** The service's replica count, or null when there is no such service (read-only: one HGET). */
  async replicasOf(name: string): Promise<number | null> {
    const replicas = await this.redis.hget(this.keys.services, `${name}:replicas`);
    return replicas === null ? null : Number(replicas);
  }

  /**
   * Counts the restart first (it has happened once issued), then shows `restarting` until `restartMs` passed.
   * Each step is one script call; a restart that takes no time is one call in all.
   */
  async restart(name: string, restartMs: number): Promise<ServiceView> {
    if (restartMs === 0) return this.restartStep(name, 'whole');
    await this.restartStep(name, 'begin');
    await new Promise((resolve) => setTimeout(resolve, restartMs));
    return this.restartStep(name, 'end');
  }

  private async restartStep(name: string, step: 'begin' | 'end' | 'whole'): Promise<ServiceView> {
    const reply = (await RESTART.run(this.redis, [this.keys.services], [name, step])) as
      [string, string, string] | null;
    if (!reply) throw new UnknownServiceError(name);
    const [status, replicas, restarts] = reply;
    return { name, status: status as ServiceStatus, replicas: Number(replicas), restarts: Number(restarts) };
  }

  async scale(name: string, replicas: number): Promise<ServiceView> {
    await this.service(name);
    await this.redis.hset(this.keys.services, `${name}:replicas`, String(replicas));
    return this.service(name);
  }

  /** The volume's size, or undefined when there is no such volume. */
  async volumeSize(name: string): Promise<number | undefined> {
    const size = await this.redis.hget(this.keys.volumes, name);
    return size === null ? undefined : Number(size);
  }

  /** True when the volume existed. */
  async deleteVolume(name: string): Promise<boolean> {
    return (await this.redis.hdel(this.keys.volumes, name)) === 1;
  }
}

function toService(name: string, hash: Record<string, string>): ServiceView {
  return {
    name,
    status: hash[`${name}:status`] as ServiceStatus,
    replicas: Number(hash[`${name}:replicas`]),
    restarts: Number(hash[`${name}:restarts`]),
  };
}
