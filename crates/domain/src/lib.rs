//! billpay-domain
