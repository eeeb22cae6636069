// Every way the approvals API refuses a claim or a completion report: the scripts' negative codes mapped to typed
// errors, and each error to its HTTP status, in one place; and a field the schema accepts but the service cannot take
// as given (400 naming it, like a schema error).
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { ExternalRefusal, ExternalRefusalReason } from '@countersign/contracts';
import type { HttpResponse as Response } from '../core/http-types';

export enum ExternalErrorCode {
  NotFound = -1,
  Expired = -7,
  NotDecided = -10,
  Denied = -11,
  FingerprintMismatch = -12,
  AlreadyClaimed = -13,
  NotClaimed = -14,
  AlreadyCompleted = -15,
}

const REFUSALS: Record<ExternalErrorCode, { reason: ExternalRefusalReason; status: number }> = {
  [ExternalErrorCode.NotFound]: { reason: 'unknown_approval', status: 404 },
  [ExternalErrorCode.Expired]: { reason: 'expired', status: 410 },
  [ExternalErrorCode.NotDecided]: { reason: 'not_decided', status: 409 },
  [ExternalErrorCode.Denied]: { reason: 'denied', status: 403 },
  [ExternalErrorCode.FingerprintMismatch]: { reason: 'fingerprint_mismatch', status: 409 },
  [ExternalErrorCode.AlreadyClaimed]: { reason: 'already_claimed', status: 409 },
  [ExternalErrorCode.NotClaimed]: { reason: 'not_claimed', status: 409 },
  [ExternalErrorCode.AlreadyCompleted]: { reason: 'already_completed', status: 409 },
};

/** A claim or completion the API refused; `message` is safe to show to the client. */
export class ExternalCallRefusedError extends Error {
  constructor(
    readonly code: ExternalErrorCode,
    message: string,
  ) {
    super(message);
    this.name = this.constructor.name;
  }

  get reason(): ExternalRefusalReason {
    return REFUSALS[this.code].reason;
  }

  get status(): number {
    return REFUSALS[this.code].status;
  }
}

/** Turns a claim or completion script's negative reply into the error the client is shown. */
export function externalRefusal(reply: (string | number)[], approvalId: string): ExternalCallRefusedError {
  const code = Number(reply[0]) as ExternalErrorCode;
  switch (code) {
    case ExternalErrorCode.NotFound:
      return new ExternalCallRefusedError(code, `no approval ${approvalId}`);
    case ExternalErrorCode.Expired:
      return new ExternalCallRefusedError(
        code,
        'the approval expired before anyone decided: do not run the call',
      );
    case ExternalErrorCode.NotDecided:
      return new ExternalCallRefusedError(code, 'the call is not decided yet: wait for the decision');
    case ExternalErrorCode.Denied:
      return new ExternalCallRefusedError(code, `the call was denied (${String(reply[1] || 'person')})`);
    case ExternalErrorCode.FingerprintMismatch:
      return new ExternalCallRefusedError(
        code,
        'the fingerprint does not match the approved call: its tool or arguments changed after approval',
      );
    case ExternalErrorCode.AlreadyClaimed:
      return new ExternalCallRefusedError(code, `the call was already claimed at ${String(reply[1])}`);
    case ExternalErrorCode.NotClaimed:
      return new ExternalCallRefusedError(code, 'the call was never claimed, so it may not have run');
    case ExternalErrorCode.AlreadyCompleted:
      return new ExternalCallRefusedError(code, `the completion was already reported (${String(reply[1])})`);
    default:
      throw new Error(`unexpected reply from an external-call script: ${JSON.stringify(reply)}`);
  }
}

@Catch(ExternalCallRefusedError)
export class ExternalRefusalFilter implements ExceptionFilter {
  catch(error: ExternalCallRefusedError, host: ArgumentsHost): void {
    const body: ExternalRefusal = { statusCode: error.status, error: error.reason, message: error.message };
    host.switchToHttp().getResponse<Response>().status(error.status).json(body);
  }
}

/** A field the schema accepts but the service cannot take as given: 400 naming it, as a schema error would. */
export class FieldRefusedError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
    /** Where the field is: `request body` or `query`. */
    readonly where = 'request body',
  ) {
    super(`${field}: ${problem}`);
    this.name = this.constructor.name;
  }
}

@Catch(FieldRefusedError)
export class FieldRefusalFilter implements ExceptionFilter {
  catch(error: FieldRefusedError, host: ArgumentsHost): void {
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(400)
      .json({
        statusCode: 400,
        error: 'Bad Request',
        message: `invalid ${error.where}: ${error.message}`,
        issues: [{ path: error.field, message: error.problem }],
      });
  }
}
