// The Slack app manifest the Slack guide has people paste (config/slack-app-manifest.yaml) stays in step with the
// code: interactivity points at the approval service's Slack route, and the bot scopes cover every Slack Web API
// method the service calls. (No Redis or network needed.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '..');
const manifest = parse(readFileSync(join(root, 'config', 'slack-app-manifest.yaml'), 'utf8')) as {
  oauth_config: { scopes: { bot: string[] } };
  settings: { interactivity: { is_enabled: boolean; request_url: string } };
};

/** The bot scope each Web API method needs (Slack's method reference); null: none (views.open needs a trigger_id). */
const SCOPE_OF_METHOD: Record<string, string | null> = {
  'chat.postMessage': 'chat:write',
  'chat.update': 'chat:write',
  'chat.postEphemeral': 'chat:write',
  'views.open': null,
};

/** The approval service's TypeScript sources, specs left out. */
function sources(dir = join(root, 'apps', 'approval-service', 'src')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** `client.chat.postMessage(`-style calls in the files that use the official Slack SDK. */
function slackMethodsCalled(): string[] {
  const methods = new Set<string>();
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes("from '@slack/web-api'")) continue;
    for (const [, family, method] of text.matchAll(/\.(chat|users|conversations|views|reactions)\.(\w+)\(/g))
      methods.add(`${family}.${method}`);
  }
  return [...methods].sort();
}

it('points interactivity at the approval service route that takes Slack clicks', () => {
  const controllers = sources()
    .map((file) => readFileSync(file, 'utf8'))
    .filter((text) => text.includes("@Controller('slack')"));
  expect(controllers).toHaveLength(1);
  const [controller] = controllers;
  const route = `/${/@Controller\('(\w+)'\)/.exec(controller)![1]}/${/@Post\('([\w-]+)'\)/.exec(controller)![1]}`;
  expect(manifest.settings.interactivity.is_enabled).toBe(true);
  expect(manifest.settings.interactivity.request_url).toBe(`https://<public-host>${route}`);
});

it('asks for the bot scopes of every Slack method the service calls, and no more', () => {
  const called = slackMethodsCalled();
  expect(called).toContain('chat.postMessage');
  const unknown = called.filter((method) => !Object.hasOwn(SCOPE_OF_METHOD, method));
  expect(unknown).toEqual([]);
  const needed = [
    ...new Set(called.flatMap((method) => (SCOPE_OF_METHOD[method] ? [SCOPE_OF_METHOD[method]] : []))),
  ].sort();
  expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(needed);
});
