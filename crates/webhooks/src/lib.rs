//! billpay-webhooks
