SET LOCAL client_min_messages = warning;
CREATE TABLE IF NOT EXISTS billpay_migrations (
    version    INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL
)
