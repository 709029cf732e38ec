//! Validation of webhook URLs configured by customers.

use url::{ParseError, Url};

/// Longest webhook URL accepted, in characters.
pub const MAX_URL_LEN: usize = 2048;

/// Why a webhook URL was rejected by [`validate_url`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Longer than [`MAX_URL_LEN`] characters.
    #[error("webhook URL must be at most {max} characters (got {len})")]
    TooLong {
        /// Length of the rejected URL, in characters.
        len: usize,
        /// The limit, [`MAX_URL_LEN`].
        max: usize,
    },
    /// Not an absolute URL.
    #[error("webhook URL is not a valid absolute URL: {0}")]
    Invalid(String),
    /// Scheme other than `http` or `https`.
    #[error("webhook URL must use http or https")]
    UnsupportedScheme,
    /// No host (or an empty one).
    #[error("webhook URL must have a host")]
    MissingHost,
    /// Contains a username and/or password (`https://user:pass@host/`).
    #[error("webhook URL must not contain a username or password")]
    Credentials,
}

/// Checks a webhook URL: an absolute `http` or `https` URL with a host, no
/// userinfo (`user:pass@`), at most [`MAX_URL_LEN`] characters.
///
/// This does not check where the host points: private and loopback targets
/// are refused at delivery time, after DNS resolution, by
/// [`DeliveryClient`](crate::DeliveryClient).
pub fn validate_url(url: &str) -> Result<(), UrlError> {
    parse(url).map(drop)
}

/// [`validate_url`], returning the parsed URL.
pub(crate) fn parse(url: &str) -> Result<Url, UrlError> {
    let len = url.chars().count();
    if len > MAX_URL_LEN {
        return Err(UrlError::TooLong {
            len,
            max: MAX_URL_LEN,
        });
    }
    let parsed = match Url::parse(url) {
        Ok(parsed) => parsed,
        Err(ParseError::EmptyHost) => return Err(UrlError::MissingHost),
        Err(err) => return Err(UrlError::Invalid(err.to_string())),
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(UrlError::UnsupportedScheme);
    }
    match parsed.host_str() {
        Some(host) if !host.is_empty() => {}
        _ => return Err(UrlError::MissingHost),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UrlError::Credentials);
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_http_and_https() {
        for url in [
            "https://example.com/hooks/billpay",
            "http://example.com",
            "https://hooks.example.com:8443/a/b?c=d#frag",
            "http://203.0.113.7:8080/hook",
            "http://[2001:db8::1]/hook",
            "https://xn--bcher-kva.example/hook",
            "https://bücher.example/hook",
            // Private targets pass here; they are refused at delivery time.
            "http://localhost:3000/hook",
            "http://127.0.0.1/hook",
        ] {
            assert_eq!(validate_url(url), Ok(()), "{url}");
        }
    }

    #[test]
    fn rejects_other_schemes() {
        for url in [
            "ftp://example.com/x",
            "file:///etc/passwd",
            "gopher://example.com/",
            "ws://example.com/",
            "javascript:alert(1)",
            "mailto:ops@example.com",
            "data:text/plain,hi",
        ] {
            assert_eq!(validate_url(url), Err(UrlError::UnsupportedScheme), "{url}");
        }
        assert_eq!(
            UrlError::UnsupportedScheme.to_string(),
            "webhook URL must use http or https"
        );
    }

    #[test]
    fn rejects_missing_host() {
        for url in ["http://", "https://", "https://:443/x", "http://?x"] {
            assert_eq!(validate_url(url), Err(UrlError::MissingHost), "{url}");
        }
        assert_eq!(
            UrlError::MissingHost.to_string(),
            "webhook URL must have a host"
        );
    }

    #[test]
    fn rejects_userinfo() {
        for url in [
            "https://user:pass@example.com/",
            "https://user@example.com/",
            "https://:pass@example.com/",
            "http://example.com@127.0.0.1/",
        ] {
            assert_eq!(validate_url(url), Err(UrlError::Credentials), "{url}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for url in [
            "",
            "example.com/hook",
            "/hook",
            "https://exa mple.com/",
            "http://[::1/",
        ] {
            assert!(
                matches!(validate_url(url), Err(UrlError::Invalid(_))),
                "{url}: {:?}",
                validate_url(url)
            );
        }
        let err = validate_url("example.com/hook").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("webhook URL is not a valid absolute URL"),
            "{err}"
        );
    }

    #[test]
    fn length_limit() {
        let prefix = "https://example.com/";
        let at_limit = format!("{prefix}{}", "a".repeat(MAX_URL_LEN - prefix.len()));
        assert_eq!(validate_url(&at_limit), Ok(()));
        let over = format!("{at_limit}a");
        assert_eq!(
            validate_url(&over),
            Err(UrlError::TooLong {
                len: MAX_URL_LEN + 1,
                max: MAX_URL_LEN
            })
        );
        assert_eq!(
            validate_url(&over).unwrap_err().to_string(),
            "webhook URL must be at most 2048 characters (got 2049)"
        );
    }
}
