// The OpenAI-compatible provider against a local server that speaks chat-completions with tool calls
// (no network): the run parks on the model's confirm call and, once approved, the model gets exactly
// one follow-up request carrying the tool's result.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer } from '../support/principals';
import { WorkerHarness } from '../support/agent-worker-harness';

jest.setTimeout(30_000);

interface ChatRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_call_id?: string;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  }[];
  tools: { type: string; function: { name: string; parameters: Record<string, unknown> } }[];
}

describe('agent worker with an OpenAI-compatible model', () => {
  const h = new WorkerHarness('openai');
  const requests: ChatRequest[] = [];
  let server: http.Server;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const request = JSON.parse(body) as ChatRequest;
        requests.push(request);
        const last = request.messages.at(-1)!;
        const message =
          last.role === 'tool'
            ? { role: 'assistant', content: `The restart went through: ${last.content}` }
            : {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: 'call_model_1',
                    type: 'function',
                    function: { name: 'restart_service', arguments: '{"service":"api"}' },
                  },
                ],
              };
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'cmpl-1',
            object: 'chat.completion',
            created: 0,
            model: request.model,
            choices: [{ index: 0, finish_reason: 'stop', message }],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await h.cleanup();
    await new Promise((resolve) => server.close(resolve));
  });

  it('parks on the model tool call and sends exactly one follow-up request after approval', async () => {
    const { port } = server.address() as AddressInfo;
    const worker = await h.startWorker({
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: 'test-key',
      OPENAI_MODEL: 'local-model',
    });
    const before = await h.restarts(worker.url, 'api');

    const runId = await h.startRun(worker.url, { agent: 'ops-llm', input: 'api is slow, restart it' });
    const [call] = await h.waitForPending(worker.url, runId);
    expect(call).toMatchObject({ toolName: 'restart_service', args: { service: 'api' } });
    expect(requests).toHaveLength(1);
    expect(requests[0].model).toBe('local-model');
    expect(requests[0].tools.map((t) => t.function.name)).toContain('scale_service');
    expect(
      requests[0].tools.find((t) => t.function.name === 'restart_service')?.function.parameters,
    ).toMatchObject({
      type: 'object',
      properties: { service: { type: 'string' } },
    });

    await h.publishDecision(h.decision(runId, call, 'approve'));
    const view = await h.waitForStatus(worker.url, runId, 'completed');
    expect(requests).toHaveLength(2);
    const followUp = requests[1].messages;
    expect(followUp.at(-2)?.tool_calls?.[0]).toMatchObject({
      id: call.callId,
      function: { name: 'restart_service' },
    });
    expect(followUp.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: call.callId,
      content: expect.stringContaining('"restarts"'),
    });
    expect(view.result).toContain('The restart went through');
    expect(await h.restarts(worker.url, 'api')).toBe(before + 1);
  });

  it('refuses to start a run on an OpenAI agent when no API key is configured, naming the variable', async () => {
    const worker = await h.startWorker();
    const response = await fetch(`${worker.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer('alice') },
      body: JSON.stringify({ agent: 'ops-llm', input: 'x' }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('OPENAI_API_KEY');
  });
});
