//! billpay-webhook-verify
