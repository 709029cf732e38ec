INSERT INTO events ({columns}, next_attempt_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?7, ?8) {resend}
