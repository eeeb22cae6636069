// A local SMTP server that keeps every mail the approval service sends, so no mail is lost when no real
// email server is configured. The demo prints each request's approval links from it.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  to: string[];
  subject: string;
  /** Raw message with quoted-printable soft breaks and escapes decoded. */
  text: string;
}

export class MailCatcher {
  readonly mails: CaughtMail[] = [];
  private server?: SMTPServer;

  /** `onMail` is told of each mail as it arrives (e.g. to print its link). */
  constructor(private readonly onMail?: (mail: CaughtMail) => void) {}

  /** Returns the SMTP_URL to give the approval service. */
  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          const text = decodeQuotedPrintable(raw);
          const mail = {
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: /^Subject: (.*)$/m.exec(text)?.[1]?.trim() ?? '(no subject)',
            text,
          };
          this.mails.push(mail);
          this.onMail?.(mail);
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

  /** Mails to `address` whose text contains `needle`. */
  to(address: string, needle = ''): CaughtMail[] {
    return this.mails.filter((m) => m.to.includes(address) && m.text.includes(needle));
  }

  /** Approval links (to `/approve/<token>`) whose token is bound to `callId`, with their recipient. */
  linksFor(callId: string): { to: string; link: string }[] {
    const found: { to: string; link: string }[] = [];
    for (const mail of this.mails) {
      const link = approvalLink(mail);
      if (link && tokenCallId(link) === callId) found.push({ to: mail.to.join(', '), link });
    }
    return found;
  }
}

/** The mail's approval link (to `/approve/<token>`), if it has one. */
export function approvalLink(mail: CaughtMail): string | undefined {
  return /https?:\/\/[^\s"<>]+\/approve\/[A-Za-z0-9_.-]+/.exec(mail.text)?.[0];
}

/** The link token's payload is readable base64url JSON (`c` = call ID); only its signature is secret. */
function tokenCallId(link: string): string | undefined {
  try {
    const payload = link.split('/approve/')[1].split('.')[0];
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { c?: string }).c;
  } catch {
    return undefined;
  }
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
