// Who the gateway is (GATEWAY_TOKEN's principal, which must be an approvals client) and whom it may act for, checked at
// start-up before anything connects.
import { Authenticator, ConfigError, hasRole, type Logger, type Principal } from '@countersign/platform';
import type { GatewayEnv } from '../config/gateway-env';

/** The gateway's own principal; a ConfigError naming GATEWAY_TOKEN when it is not a valid approvals client's. */
export async function gatewayPrincipal(authenticator: Authenticator, env: GatewayEnv): Promise<Principal> {
  const found = await authenticator.fromBearer(env.GATEWAY_TOKEN);
  if (!found.ok)
    throw new ConfigError(`invalid configuration:\n  GATEWAY_TOKEN: ${found.reason} (PRINCIPALS_CONFIG)`);
  if (!hasRole(found.principal, 'approvals-client'))
    throw new ConfigError(
      `invalid configuration:\n  GATEWAY_TOKEN: principal "${found.principal.id}" needs the approvals-client role`,
    );
  return found.principal;
}

/** Users of the RBAC config the gateway may not act for would have every confirm-tier call refused: say so at start. */
export function checkUsers(
  users: Record<string, string[]>,
  authenticator: Authenticator,
  self: Principal,
  logger: Logger,
): void {
  for (const user of Object.keys(users)) {
    if (!authenticator.directory.get(user))
      logger.warn(
        { user },
        'GATEWAY_CONFIG users: not a principal of PRINCIPALS_CONFIG; nobody can call as it',
      );
    else if (user !== self.id && !self.actAs.includes('*') && !self.actAs.includes(user))
      logger.warn(
        { user, gateway: self.id },
        "the gateway's principal has no actAs entry for this user: its confirm-tier calls will be refused",
      );
  }
}
