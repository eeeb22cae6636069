// The gateway's settings: its environment, GATEWAY_CONFIG and PRINCIPALS_CONFIG, validated once at start-up and provided
// to every service under GATEWAY_SETTINGS. Loading them throws a ConfigError naming the bad variable or field.
import { loadJsonConfig, type PrincipalsConfig, PrincipalsConfigSchema } from '@countersign/platform';
import { type GatewayConfig, GatewayConfigSchema } from './gateway-config.schema';
import { type GatewayEnv, loadGatewayEnv } from './gateway-env';

export interface GatewaySettings {
  env: GatewayEnv;
  config: GatewayConfig;
  principals: PrincipalsConfig;
  /** The environment map as given: the config's `$secret` and `$env` references are read from it, nothing else. */
  vars: Readonly<Record<string, string | undefined>>;
}

/** Injection token of the GatewaySettings. */
export const GATEWAY_SETTINGS = Symbol('GatewaySettings');

export function loadGatewaySettings(vars: Record<string, string | undefined>): GatewaySettings {
  const env = loadGatewayEnv(vars);
  return {
    env,
    config: loadJsonConfig('GATEWAY_CONFIG', env.GATEWAY_CONFIG, GatewayConfigSchema),
    principals: loadJsonConfig('PRINCIPALS_CONFIG', env.PRINCIPALS_CONFIG, PrincipalsConfigSchema),
    vars,
  };
}
