//! billpay-worker
