//! billpay-supplier
