import { Inject, Injectable } from '@nestjs/common';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';

/** The base URL of links the service sends out: PUBLIC_URL, else the address it listens on (known after listen). */
@Injectable()
export class ServiceAddress {
  private listening = 'http://localhost:3001';

  constructor(@Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig) {}

  setListening(url: string): void {
    this.listening = url;
  }

  get publicUrl(): string {
    return (this.config.env.PUBLIC_URL ?? this.listening).replace(/\/+$/, '');
  }
}
