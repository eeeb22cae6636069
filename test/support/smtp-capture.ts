// A real local SMTP server (smtp-server) that keeps every message it receives.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  to: string[];
  /** The raw message with quoted-printable soft breaks and escapes decoded. */
  text: string;
}

export class SmtpCapture {
  readonly mails: CapturedMail[] = [];
  private server?: SMTPServer;

  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          this.mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            text: decodeQuotedPrintable(raw),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `smtp://127.0.0.1:${(this.server!.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  to(address: string, needle = ''): CapturedMail[] {
    return this.mails.filter((m) => m.to.includes(address) && m.text.includes(needle));
  }
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
