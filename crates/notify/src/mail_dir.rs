//! Development email: each message written to a folder as an `.eml` file
//! (one line logged per message, never its body), so sign-up works on a
//! laptop with no mail server.

use crate::{Channel, ChannelKind, Message, SendError, Sent};
use std::path::PathBuf;

/// Writes emails to `dir` as `<id>.eml`.
#[derive(Debug, Clone)]
pub struct MailDir {
    dir: PathBuf,
    from: String,
}

impl MailDir {
    pub fn new(dir: impl Into<PathBuf>, from: impl Into<String>) -> Self {
        MailDir {
            dir: dir.into(),
            from: from.into(),
        }
    }

    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The file a message is written to (the same on a retry: written once).
    pub fn path_of(&self, id: &str) -> PathBuf {
        let safe: String = id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        self.dir.join(format!("{safe}.eml"))
    }

    fn render(&self, message: &Message) -> String {
        let mut out = format!(
            "Message-ID: <{}@billpay>\r\nFrom: {}\r\nTo: {}\r\nSubject: {}\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\n{}\r\n",
            message.id, self.from, message.to, message.subject, message.text
        );
        if let Some(html) = &message.html {
            out.push_str("\r\n-- HTML --\r\n");
            out.push_str(html);
            out.push_str("\r\n");
        }
        out
    }
}

#[async_trait::async_trait]
impl Channel for MailDir {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Email
    }

    fn name(&self) -> &'static str {
        "mail_dir"
    }

    async fn send(&self, message: &Message) -> Result<Sent, SendError> {
        let path = self.path_of(&message.id);
        let body = self.render(message);
        tokio::fs::create_dir_all(&self.dir)
            .await
            .map_err(|e| SendError::Transient(format!("cannot create {}: {e}", self.dir.display())))?;
        tokio::fs::write(&path, body)
            .await
            .map_err(|e| SendError::Transient(format!("cannot write {}: {e}", path.display())))?;
        tracing::info!(to = %message.to, subject = %message.subject, file = %path.display(), "email written to the mail folder");
        Ok(Sent {
            provider_id: Some(path.display().to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_message_is_one_file_named_by_its_id_even_when_sent_twice() {
        let dir = tempfile::tempdir().unwrap();
        let channel = MailDir::new(dir.path().join("mail"), "Shop <shop@example.com>");
        let message = Message {
            id: "n-1/2".into(),
            to: "ada@example.com".into(),
            subject: "Your code".into(),
            text: "123456".into(),
            html: None,
        };
        channel.send(&message).await.unwrap();
        channel.send(&message).await.unwrap();
        let files: Vec<_> = std::fs::read_dir(dir.path().join("mail")).unwrap().collect();
        assert_eq!(files.len(), 1);
        let text = std::fs::read_to_string(channel.path_of("n-1/2")).unwrap();
        assert!(text.contains("To: ada@example.com"), "{text}");
        assert!(text.contains("Subject: Your code"), "{text}");
        assert!(text.contains("123456"), "{text}");
    }
}
