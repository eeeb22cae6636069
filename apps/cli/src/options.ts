// Options several commands share: where the services are and who the approver at the terminal is.
import { Option } from 'commander';

export const DEFAULT_WORKER_URL = 'http://127.0.0.1:3000';
export const DEFAULT_APPROVAL_URL = 'http://127.0.0.1:3001';

export const workerUrlOption = () =>
  new Option('--worker-url <url>', 'agent worker base URL')
    .env('COUNTERSIGN_WORKER_URL')
    .default(DEFAULT_WORKER_URL);

export const approvalUrlOption = () =>
  new Option('--approval-url <url>', 'approval service base URL')
    .env('COUNTERSIGN_APPROVAL_URL')
    .default(DEFAULT_APPROVAL_URL);

/** Your credential for both services: an API token (or an OIDC JWT) of your principal in PRINCIPALS_CONFIG. */
export const tokenOption = () =>
  new Option('--token <token>', 'your API token (PRINCIPALS_CONFIG holds its hash)').env('COUNTERSIGN_TOKEN');

/**
 * `run`: the credential of the approver answering prompts at this terminal, when that is not you (you never decide your
 * own run). Elsewhere an alias of --token kept for scripts written before there was one token per person.
 */
export const approverTokenOption = () =>
  new Option('--approver-token <token>', "an approver's API token, to answer confirmation prompts").env(
    'COUNTERSIGN_APPROVER_TOKEN',
  );

export const legacyApproverTokenOption = () => approverTokenOption().hideHelp();

/** The token a command acts with: --token, else the older --approver-token. */
export const tokenOf = (options: { token?: string; approverToken?: string }) =>
  options.token ?? options.approverToken;

/** Base URLs without a trailing slash, so paths can be appended. */
export const trimUrl = (url: string) => url.replace(/\/+$/, '');
