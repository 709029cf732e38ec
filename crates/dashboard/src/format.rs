//! Display helpers: the web kit's (`billpay_webkit::format`), shared with the console.

pub use billpay_webkit::format::{naira, short_time, sortable_time};
