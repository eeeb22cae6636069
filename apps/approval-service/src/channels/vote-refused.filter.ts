// Maps a refused vote to its HTTP status in one place, for the JSON API (and the email link's pages).
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { HttpResponse as Response } from '../core/http-types';
import { InvalidEditError } from '../votes/edited-args';
import { ErrorCode, VoteRefusedError } from '../votes/vote-errors';

export const REFUSAL_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.NotFound]: 404,
  [ErrorCode.AlreadyDecided]: 409,
  [ErrorCode.NotInGroup]: 403,
  [ErrorCode.SelfApproval]: 403,
  [ErrorCode.AlreadyVoted]: 409,
  [ErrorCode.TokenSpent]: 409,
  [ErrorCode.Expired]: 410,
  [ErrorCode.Superseded]: 409,
  [ErrorCode.Notice]: 409,
  [ErrorCode.Edited]: 409,
  [ErrorCode.NotANotice]: 409,
  [ErrorCode.RouteChanged]: 409,
};

@Catch(VoteRefusedError, InvalidEditError)
export class VoteRefusedFilter implements ExceptionFilter {
  catch(error: VoteRefusedError | InvalidEditError, host: ArgumentsHost): void {
    const status = error instanceof InvalidEditError ? 400 : REFUSAL_STATUS[error.code];
    const reason = error.reason;
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: reason, message: error.message });
  }
}
