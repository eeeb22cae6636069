// Maps a refused vote to its HTTP status in one place, for the JSON API.
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { HttpResponse as Response } from '../http-types';
import { ErrorCode, VoteRefusedError } from './approval-errors';

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
};

@Catch(VoteRefusedError)
export class VoteRefusedFilter implements ExceptionFilter {
  catch(error: VoteRefusedError, host: ArgumentsHost): void {
    const status = REFUSAL_STATUS[error.code];
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: error.reason, message: error.message });
  }
}
