// Prometheus metrics of one gateway instance (its own Registry: tests start several in one process): its tool calls by
// outcome, its admission hooks' latency and its shadow policy's disagreements, defined once with the worker's
// (ToolCallMetrics). Served at /metrics on the HTTP port behind a `metrics-reader` credential, or on METRICS_PORT.
import { Injectable } from '@nestjs/common';
import { ToolCallMetrics } from '@countersign/platform';

@Injectable()
export class GatewayMetrics extends ToolCallMetrics {}
