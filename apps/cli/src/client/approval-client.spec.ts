import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError } from '../cli-error';
import { ApprovalClient } from './approval-client';

/** A stand-in approval service: answers each GET /approvals with the next of `pages` (body and Link header). */
function serve(pages: { items: { id: number }[]; link?: string }[]) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const page = pages[requests.length - 1] ?? { items: [] };
    res.writeHead(200, { 'content-type': 'application/json', ...(page.link ? { link: page.link } : {}) });
    res.end(JSON.stringify(page.items));
  });
  return {
    requests,
    server,
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
  };
}

const items = (...ids: number[]) => ids.map((id) => ({ id }));
let server: Server | undefined;
afterEach(() => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined))));

describe('ApprovalClient.list', () => {
  it('follows rel="next" links, relative to the page they came with, until a page has none', async () => {
    const sut = serve([
      { items: items(1, 2), link: '</approvals?limit=2&cursor=a>; rel="next"' },
      { items: [], link: '</approvals?limit=2&cursor=b>; rel="next"' },
      { items: items(3) },
    ]);
    server = sut.server;
    const result = await new ApprovalClient(await sut.start(), 'token').list('pending');
    expect(result).toEqual({ views: items(1, 2, 3), more: false });
    expect(sut.requests).toEqual([
      '/approvals?status=pending&limit=500',
      '/approvals?limit=2&cursor=a',
      '/approvals?limit=2&cursor=b',
    ]);
  });

  it('stops after `max` and says more follow', async () => {
    const sut = serve([
      { items: items(1, 2), link: '</approvals?cursor=a>; rel="next"' },
      { items: items(3, 4), link: '</approvals?cursor=b>; rel="next"' },
    ]);
    server = sut.server;
    const result = await new ApprovalClient(await sut.start(), 'token').list(undefined, 3);
    expect(result).toEqual({ views: items(1, 2, 3), more: true });
    expect(sut.requests).toHaveLength(2);
  });

  it('refuses a next link to another origin, which would get the approver token', async () => {
    const sut = serve([{ items: items(1), link: '<http://example.invalid/approvals?cursor=a>; rel="next"' }]);
    server = sut.server;
    const list = new ApprovalClient(await sut.start(), 'token').list();
    await expect(list).rejects.toThrow(CliError);
    await expect(list).rejects.toThrow('next-page link that cannot be followed');
    expect(sut.requests).toHaveLength(1);
  });
});
