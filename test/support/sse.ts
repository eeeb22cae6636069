// Reads a worker's Server-Sent Events stream (GET /runs/:runId/events) the way a follower would, over node:http.
import http from 'node:http';
import { bearer } from './principals';

export interface SseEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Reads an SSE stream into `events` until the server ends it, or, with `cutAfterMs`, until then (the stream of a
 * run that is still parked stays open). As alice (who starts the runs in these tests) unless `headers` says otherwise.
 */
export function readSse(
  url: string,
  events: SseEvent[],
  headers: Record<string, string> = {},
  { cutAfterMs }: { cutAfterMs?: number } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { ...bearer('alice'), ...headers } }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data) events.push({ ...(id ? { id } : {}), event, data: JSON.parse(data) });
        }
      });
      res.on('end', () => resolve());
    });
    request.on('error', reject);
    if (cutAfterMs !== undefined)
      setTimeout(() => {
        // Resolved first: the error the cut raises on the request no longer counts.
        resolve();
        request.destroy();
      }, cutAfterMs);
  });
}
