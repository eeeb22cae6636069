import { BadRequestException, type PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { describeZodError } from '@countersign/contracts';

/** Validates an HTTP body, query or param; a 400 names every bad field. */
export class ZodValidationPipe<S extends z.ZodType> implements PipeTransform<unknown, z.output<S>> {
  constructor(
    private readonly schema: S,
    private readonly what = 'request body',
  ) {}

  transform(value: unknown): z.output<S> {
    const parsed = this.schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = describeZodError(parsed.error);
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      message: `invalid ${this.what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    });
  }
}
