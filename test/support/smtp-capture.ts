// The tests capture mail with the demo's mail catcher: one real local SMTP server (smtp-server) for both.
export { MailCatcher as SmtpCapture, type CaughtMail as CapturedMail } from '../../scripts/demo/mail-catcher';
