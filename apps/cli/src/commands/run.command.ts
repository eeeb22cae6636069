// `countersign run <agent> "<input>"`: starts a run, streams its events, and — when the person at the
// terminal is an approver of a call — asks "Allow? [y/n]" and sends the answer through the approval service,
// so it is fingerprinted, authorized and audited like a decision from any other channel.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { z } from 'zod';
import {
  ScriptTurnSchema,
  type ApprovalView,
  type PendingCall,
  type ScriptTurn,
} from '@countersign/contracts';
import { ApprovalClient, RevisionChangedError } from '../client/approval-client';
import { WorkerClient } from '../client/worker-client';
import { CliError, EXIT_CODES_HELP, ExitCode } from '../cli-error';
import { approvalUrlOption, approverTokenOption, tokenOption, trimUrl, workerUrlOption } from '../options';
import { LinePrompt } from '../prompt';
import { callText, currentRevision, eventLine, requestLines } from '../render';

export interface RunOptions {
  token?: string;
  onBehalfOf?: string;
  script?: string;
  session?: string;
  workerUrl: string;
  approvalUrl: string;
  approverToken?: string;
  prompt: boolean;
}

const ScriptFileSchema = z.union([
  z.array(ScriptTurnSchema),
  z.object({ script: z.array(ScriptTurnSchema) }).transform((file) => file.script),
]);

export function runCommand(): Command {
  return new Command('run')
    .description(
      'Start a run of an agent and stream its events; answer its confirmation requests if you are an approver.',
    )
    .argument('<agent>', 'agent name from the agents config, e.g. ops')
    .argument('<input>', 'what the agent should do')
    .addOption(tokenOption())
    .option(
      '--on-behalf-of <userId>',
      'machine clients with an actAs entry: start the run for this user (RBAC applies to them)',
    )
    .option('--script <file>', 'JSON file of scripted model turns (agents whose model is "scripted" only)')
    .option('--session <sessionId>', 'session ID to attach the run to')
    .addOption(workerUrlOption())
    .addOption(approvalUrlOption())
    .addOption(approverTokenOption())
    .option(
      '--no-prompt',
      'never ask; only stream (someone decides in the inbox, Slack, email or with approve/deny)',
    )
    .addHelpText(
      'after',
      `
Example:
  $ countersign run ops "restart payments" --script examples/runbook.json \\
      --token alice-demo-token-change-me --approver-token carol-demo-token-change-me

The run starts in the name of the token's principal (--token). When a call needs confirmation and the
approver token (--approver-token) belongs to an approver the call is routed to, the tool and its
arguments are shown and you are asked "Allow? [y/n]". The answer goes through the approval service
(POST /approvals/:id/decisions), which checks that this approver may decide and signs it. The
requester may never approve their own call, so the approver token must be someone else's.
${EXIT_CODES_HELP}`,
    )
    .action(async (agent: string, input: string, options: RunOptions) => {
      process.exitCode = await runAgent(agent, input, options);
    });
}

async function runAgent(agent: string, input: string, options: RunOptions): Promise<number> {
  const script = options.script ? readScript(options.script) : undefined;
  const worker = new WorkerClient(trimUrl(options.workerUrl), options.token);
  const approvals = await approverClient(options);

  const runId = await worker.startRun({
    agent,
    input,
    ...(options.onBehalfOf ? { onBehalfOf: options.onBehalfOf } : {}),
    ...(options.session ? { sessionId: options.session } : {}),
    ...(script ? { script } : {}),
  });
  say(`▶ run ${runId} started (agent ${agent}${options.onBehalfOf ? `, for ${options.onBehalfOf}` : ''})`);
  return followRun(worker, approvals, runId, options);
}

/**
 * The approval service as the approver who answers the prompts (`--approver-token`), when there is one; checked
 * first, so a wrong token or a service that is down fails before anything starts.
 */
export async function approverClient(
  options: Pick<RunOptions, 'approvalUrl' | 'approverToken' | 'prompt'>,
): Promise<ApprovalClient | undefined> {
  if (!options.prompt || !options.approverToken) return undefined;
  const approvals = new ApprovalClient(trimUrl(options.approvalUrl), options.approverToken);
  await approvals.page({ status: 'pending', limit: 1 });
  return approvals;
}

/** Streams the run's events; asks the person at the terminal about each confirmation routed to them. */
export async function followRun(
  worker: WorkerClient,
  approvals: ApprovalClient | undefined,
  runId: string,
  options: Pick<RunOptions, 'approvalUrl'>,
): Promise<number> {
  const asked = new Set<string>();
  let prompt: LinePrompt | undefined;
  try {
    for await (const event of worker.follow(runId)) {
      const line = eventLine(event);
      if (line) say(line);
      if (event.type === 'tool_confirmation') {
        // By request: a later turn that reuses a call ID is a new question.
        const id = (await requestIdOf(worker, runId, event.call)) ?? event.call.callId;
        if (asked.has(id)) continue;
        asked.add(id);
        if (approvals) await confirm(approvals, id, (prompt ??= new LinePrompt()));
        else say(`  waiting for an approver: ${trimUrl(options.approvalUrl)}/inbox`);
      }
      if (event.type === 'done') return event.status === 'completed' ? ExitCode.Ok : ExitCode.Failure;
    }
  } finally {
    prompt?.close();
  }
  return ExitCode.Failure;
}

/**
 * The request a confirmation is about: the run's pending call of that ID says it (events leave it out). Undefined
 * once the run has moved on; the call ID then names the request, as far as the approval service can tell.
 */
async function requestIdOf(
  worker: WorkerClient,
  runId: string,
  call: PendingCall,
): Promise<string | undefined> {
  const view = await worker.run(runId);
  return view.pending.find((p) => p.callId === call.callId)?.requestId;
}

/**
 * Asks the person at the terminal about one request (by request ID or call ID), if routed to them and open. The answer
 * is pinned to the revision shown; when another approver edited the arguments meanwhile, it shows the request as it
 * is now and asks again.
 */
async function confirm(approvals: ApprovalClient, id: string, prompt: LinePrompt): Promise<void> {
  let view = await waitForRequest(approvals, id);
  if (!view) {
    say('  not routed to you: waiting for an approver (inbox, Slack, email)');
    return;
  }
  while (view?.status === 'pending') view = await ask(approvals, view, prompt);
}

/** One question about the revision `view` shows; the request as it is now when that revision was edited meanwhile. */
async function ask(
  approvals: ApprovalClient,
  view: ApprovalView,
  prompt: LinePrompt,
): Promise<ApprovalView | undefined> {
  const r = view.request;
  const shown = currentRevision(view);
  for (const line of requestLines(view)) say(`  ${line}`);
  const answer = await prompt.choose('Allow? [y/n] (e: edit the arguments, then approve)', [
    'yes',
    'no',
    'edit',
  ] as const);
  if (answer === undefined) {
    say('  no answer (stdin closed): waiting for an approver (inbox, Slack, email)');
    return undefined;
  }
  const args = answer === 'edit' ? await editedArgs(prompt) : undefined;
  if (answer === 'edit' && !args) return undefined;
  const allow = answer !== 'no';
  const reason = allow ? undefined : (await prompt.line('Reason (optional):')) || undefined;
  try {
    const result = await approvals.decide(r.requestId, allow ? 'approve' : 'deny', reason, {
      args,
      fingerprint: shown.fingerprint,
    });
    say(
      result.status === 'decided'
        ? `  ${result.decision === 'approve' ? 'approved' : 'denied'} ${callText({ toolName: r.toolName, args: args ?? shown.args })} (by ${result.approvers?.join(', ')})`
        : result.status === 'rerouted'
          ? `  not approved: your edit routed the call to ${result.route?.groups.join(', ')}, whose approvers decide it`
          : `  vote recorded (${result.approvals}/${result.quorum}); waiting for another approver`,
    );
    if (result.next) say(`  ${result.next}`);
  } catch (error) {
    if (error instanceof RevisionChangedError) {
      say('  not decided: the arguments changed while you were asked; the request as it is now:');
      return error.current;
    }
    if (!(error instanceof CliError) || error.exitCode === ExitCode.Unreachable) throw error;
    say(`  not decided: ${error.message}`); // e.g. decided elsewhere first, or your own request
  }
  return undefined;
}

/** The edited arguments as one line of JSON; undefined (and said why) when stdin closed or it is not an object. */
async function editedArgs(prompt: LinePrompt): Promise<Record<string, unknown> | undefined> {
  const text = await prompt.line('Arguments as JSON (one line):');
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // said below
  }
  say(
    '  not a JSON object: nothing decided; decide in the inbox or with `countersign approve <requestId> --args`',
  );
  return undefined;
}

/** The request reaches the approval service through a queue, a moment after the worker parked the call. */
async function waitForRequest(approvals: ApprovalClient, id: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = await approvals.get(id);
    if (view || Date.now() > deadline) return view;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function readScript(file: string): ScriptTurn[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`--script ${file}: ${(error as Error).message}`, ExitCode.InvalidInput);
  }
  const parsed = ScriptFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      `--script ${file}: not a list of turns ({ "toolCalls": [...] } or { "text": "..." }): ${issue?.path.join('.')} ${issue?.message}`,
      ExitCode.InvalidInput,
    );
  }
  return parsed.data;
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}
