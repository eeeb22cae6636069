// The SDK's errors. Every one of them means "nothing was run": the SDK fails closed.

/** The approvals API could not be reached, or answered something the SDK does not understand. */
export class CountersignError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
  }
}

/** The approvals API refused a request: `status` is the HTTP status, `reason` the API's `error` field. */
export class CountersignApiError extends CountersignError {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(`${status} ${reason}: ${message}`);
  }
}
