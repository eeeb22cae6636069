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

export const approverTokenOption = () =>
  new Option(
    '--approver-token <token>',
    'your approver API token (the apiToken of an approver in the approvals config)',
  ).env('COUNTERSIGN_APPROVER_TOKEN');

/** Base URLs without a trailing slash, so paths can be appended. */
export const trimUrl = (url: string) => url.replace(/\/+$/, '');
