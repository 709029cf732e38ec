//! billpay-store
