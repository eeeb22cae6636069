// Limits for the test services. A test file starts hundreds of runs and decisions in seconds, as one principal and
// from one address, which the real-use defaults would refuse; so the harnesses set explicit, far higher limits. They
// are still counted on every request (the guards and the digest admission run in every test); the tests of the
// limits themselves set their own, low ones.
export const TEST_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_RUN_STARTS: '100000/1m',
  RATE_LIMIT_RUN_STARTS_MACHINE: '100000/1m',
  RATE_LIMIT_RUN_STARTS_ADDRESS: '100000/1m',
  RATE_LIMIT_DECISIONS: '100000/1m',
  RATE_LIMIT_DECISIONS_MACHINE: '100000/1m',
  RATE_LIMIT_DECISIONS_ADDRESS: '100000/1m',
  RATE_LIMIT_SLACK_ADDRESS: '100000/1m',
  RATE_LIMIT_SIGN_IN: '100000/1m',
  RATE_LIMIT_SIGN_IN_ADDRESS: '100000/1m',
  RATE_LIMIT_EXTERNAL_SUBMISSIONS: '100000/1m',
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER: '100000/1m',
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS: '100000/1m',
  NOTIFY_DIGEST_AFTER: '100000',
};
