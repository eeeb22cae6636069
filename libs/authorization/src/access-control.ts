// RBAC: roles allow or deny `tool:<name>` (or `tool:*`); an explicit deny beats any allow.
export const ALL_TOOLS_PERMISSION = 'tool:*';

export function toolPermission(toolName: string): string {
  return `tool:${toolName}`;
}

export interface RoleDefinition {
  /** Permissions this role grants: `tool:<name>` or `tool:*`. */
  allow?: readonly string[];
  /** Permissions this role refuses; a deny in any of a user's roles wins. */
  deny?: readonly string[];
}

export type AccessCheck = { allowed: true } | { allowed: false; permission: string; reason: string };

export class AccessControl {
  private readonly roles = new Map<string, { allow: Set<string>; deny: Set<string> }>();
  private readonly userRoles = new Map<string, Set<string>>();

  defineRole(name: string, role: RoleDefinition): this {
    this.roles.set(name, { allow: new Set(role.allow ?? []), deny: new Set(role.deny ?? []) });
    return this;
  }

  /** Gives `userId` the named roles. Assigning an undefined role is a configuration error. */
  assign(userId: string, ...roleNames: string[]): this {
    for (const role of roleNames) {
      if (!this.roles.has(role)) throw new Error(`role "${role}" is not defined`);
    }
    const roles = this.userRoles.get(userId) ?? new Set<string>();
    for (const role of roleNames) roles.add(role);
    this.userRoles.set(userId, roles);
    return this;
  }

  rolesOf(userId: string): string[] {
    return [...(this.userRoles.get(userId) ?? [])];
  }

  check(userId: string, toolName: string): AccessCheck {
    const permission = toolPermission(toolName);
    const roles = [...(this.userRoles.get(userId) ?? [])].map((r) => this.roles.get(r)!);
    const grants = (set: Set<string>) => set.has(permission) || set.has(ALL_TOOLS_PERMISSION);
    if (roles.some((r) => grants(r.deny))) {
      return {
        allowed: false,
        permission,
        reason: `Permission "${permission}" is denied to user "${userId}" by role.`,
      };
    }
    if (roles.some((r) => grants(r.allow))) return { allowed: true };
    return { allowed: false, permission, reason: `User "${userId}" lacks permission "${permission}".` };
  }
}
