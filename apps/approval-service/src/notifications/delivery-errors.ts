// How a notifier says that a delivery certainly did not happen, as opposed to any other failure, after which
// it may or may not have happened (see OnceOnlyDelivery).

/** The channel answered with a refusal (Slack's ok:false or an HTTP error, an SMTP 4xx/5xx) or was never reached. */
export class NotDeliveredError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
  }
}
