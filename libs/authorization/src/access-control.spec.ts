import { AccessControl, ALL_TOOLS_PERMISSION, toolPermission } from './access-control';

describe('AccessControl', () => {
  it('names a tool permission tool:<name>', () => {
    expect(toolPermission('restart_service')).toBe('tool:restart_service');
    expect(ALL_TOOLS_PERMISSION).toBe('tool:*');
  });

  describe('check', () => {
    it.each<[string, { allow?: string[]; deny?: string[] }[], boolean]>([
      ['allows a role granting the tool', [{ allow: ['tool:restart_service'] }], true],
      ['allows a role granting all tools', [{ allow: ['tool:*'] }], true],
      ['denies when no role grants anything', [{}], false],
      ['denies when only another tool is granted', [{ allow: ['tool:read_logs'] }], false],
      [
        'lets a deny beat an allow in the same role',
        [{ allow: ['tool:*'], deny: ['tool:restart_service'] }],
        false,
      ],
      [
        'lets a deny in one role beat an allow in another',
        [{ allow: ['tool:restart_service'] }, { deny: ['tool:restart_service'] }],
        false,
      ],
      [
        'lets a deny of all tools beat a specific allow',
        [{ allow: ['tool:restart_service'] }, { deny: ['tool:*'] }],
        false,
      ],
      ['ignores a deny of another tool', [{ allow: ['tool:*'], deny: ['tool:drop_database'] }], true],
    ])('%s', (_case, roles, allowed) => {
      const sut = new AccessControl();
      roles.forEach((role, i) => sut.defineRole(`role${i}`, role));
      sut.assign('alice', ...roles.map((_, i) => `role${i}`));
      expect(sut.check('alice', 'restart_service').allowed).toBe(allowed);
    });

    it('denies a user with no roles and names the missing permission', () => {
      const sut = new AccessControl().defineRole('ops', { allow: ['tool:*'] });
      const check = sut.check('mallory', 'restart_service');
      expect(check).toEqual({
        allowed: false,
        permission: 'tool:restart_service',
        reason: expect.stringContaining('tool:restart_service'),
      });
    });

    it('says a deny was explicit and names the permission', () => {
      const sut = new AccessControl().defineRole('intern', {
        allow: ['tool:*'],
        deny: ['tool:drop_database'],
      });
      sut.assign('bob', 'intern');
      const check = sut.check('bob', 'drop_database');
      expect(check.allowed).toBe(false);
      expect(!check.allowed && check.reason).toMatch(/"tool:drop_database" is denied/);
    });
  });

  it('refuses to assign a role that is not defined', () => {
    expect(() => new AccessControl().assign('alice', 'ghost')).toThrow(/role "ghost" is not defined/);
  });

  it('accumulates roles over several assignments', () => {
    const sut = new AccessControl().defineRole('a', {}).defineRole('b', {});
    sut.assign('alice', 'a').assign('alice', 'b', 'a');
    expect(sut.rolesOf('alice').sort()).toEqual(['a', 'b']);
  });
});
