// Marks a route as one kind of rate-limited request ("run-start", "decision", "sign-in", …). The service's rate-limit
// policy says how many of that kind a principal and a source address may send per window; routes without the mark
// are not limited.
import { SetMetadata } from '@nestjs/common';

export const RATE_LIMITED = 'countersign:rate-limited';

export const RateLimited = (kind: string) => SetMetadata(RATE_LIMITED, kind);
