//! billpay-api
