//! Notification channels against the SMTP sink and the fake Termii: the
//! channels themselves (in this process, as the outbox worker calls them),
//! `serve` refusing a half-configured channel, and `billpay notify test`.

mod channels;
mod cli;
