// The agents config of the MCP tests: the published filesystem server over stdio (`fs`) and a test MCP server over
// streamable HTTP (`notes`, its URL and token from NOTES_MCP_URL and NOTES_MCP_TOKEN), for an agent `mcp` run by alice.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const FS_SERVER = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);

/** An agents config with the two servers; `dir` is the filesystem server's only allowed directory. */
export function mcpAgentsConfig(dir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    mcpServers: {
      fs: {
        transport: 'stdio',
        command: process.execPath,
        args: [FS_SERVER, dir],
        env: { FS_TOKEN: { $secret: 'MCP_FS_TOKEN' } },
        // The server marks list_directory read-only and write_file destructive: hints only ever raise a tier.
        tiers: { '*': 'confirm', 'read_*': 'auto', list_allowed_directories: 'auto' },
        restart: { initialDelayMs: 100, maxDelayMs: 1000 },
      },
      notes: {
        transport: 'http',
        url: { $env: 'NOTES_MCP_URL' },
        headers: { Authorization: { $secret: 'NOTES_MCP_TOKEN', prefix: 'Bearer ' } },
        // write_note is raised to confirm by its destructiveHint.
        tiers: { '*': 'auto' },
        toolTimeoutMs: { slow: 400 },
        maxResultBytes: 1024,
        restart: { initialDelayMs: 100, maxDelayMs: 500 },
      },
    },
    agents: {
      mcp: {
        tools: [{ server: 'fs' }, { server: 'notes' }],
        roles: { operator: { allow: ['tool:*'] } },
        users: { alice: ['operator'] },
      },
    },
    ...extra,
  };
}

export function writeConfig(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cs-mcp-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}
