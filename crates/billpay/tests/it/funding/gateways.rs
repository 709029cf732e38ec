//! The two fake gateways behind one face, and a server with both turned on.

use crate::support::monnify::{self, FakeMonnify, Verify};
use crate::support::paystack::{self, FakePaystack};
use crate::support::{Customer, Options, TestServer};
use serde_json::Value;

#[derive(Clone)]
pub enum Fake {
    Monnify(FakeMonnify),
    Paystack(FakePaystack),
}

impl Fake {
    pub fn name(&self) -> &'static str {
        match self {
            Fake::Monnify(_) => "monnify",
            Fake::Paystack(_) => "paystack",
        }
    }

    pub fn signature_header(&self) -> &'static str {
        match self {
            Fake::Monnify(_) => "monnify-signature",
            Fake::Paystack(_) => "x-paystack-signature",
        }
    }

    pub fn paystack(&self) -> &FakePaystack {
        match self {
            Fake::Paystack(fake) => fake,
            Fake::Monnify(_) => panic!("not Paystack"),
        }
    }

    pub fn reserve_calls(&self) -> usize {
        match self {
            Fake::Monnify(fake) => fake.reserve_calls(),
            Fake::Paystack(fake) => fake.calls().0 + fake.calls().1,
        }
    }

    /// A transfer into the reserved account of `account_id` (Monnify names it
    /// by our account reference, Paystack by the account number); `None`
    /// for an account billpay does not hold.
    pub fn transfer(&self, account_id: Option<&str>, number: Option<&str>, naira: f64) -> String {
        match self {
            Fake::Monnify(fake) => fake.transfer(account_id, naira),
            Fake::Paystack(fake) => fake.transfer(number, naira),
        }
    }

    pub fn webhook(&self, reference: &str) -> (Vec<u8>, String) {
        match self {
            Fake::Monnify(fake) => fake.webhook(reference),
            Fake::Paystack(fake) => fake.webhook(reference),
        }
    }

    pub fn webhook_claiming(&self, reference: &str, naira: f64) -> (Vec<u8>, String) {
        match self {
            Fake::Monnify(fake) => fake.webhook_claiming(reference, naira),
            Fake::Paystack(fake) => fake.webhook_claiming(reference, naira),
        }
    }

    pub fn not_a_payment(&self) -> (Vec<u8>, String) {
        match self {
            Fake::Monnify(fake) => fake.settlement_webhook(),
            Fake::Paystack(fake) => fake.transfer_webhook(),
        }
    }

    /// The gateway now says the payment is not paid.
    pub fn set_unpaid(&self, reference: &str) {
        match self {
            Fake::Monnify(fake) => fake.set_status(reference, "PENDING"),
            Fake::Paystack(fake) => fake.set_status(reference, "abandoned"),
        }
    }

    pub fn set_verify(&self, verify: Verify) {
        match self {
            Fake::Monnify(fake) => fake.set_verify(verify),
            Fake::Paystack(fake) => fake.set_verify(verify),
        }
    }
}

pub struct Setup {
    pub server: TestServer,
    pub fakes: Vec<Fake>,
}

impl Setup {
    /// Both fakes, and a server with both gateways on (plus `extra`).
    pub async fn start(extra: &[(&str, &str)]) -> Setup {
        let fakes = vec![
            Fake::Monnify(FakeMonnify::start().await),
            Fake::Paystack(FakePaystack::start().await),
        ];
        let mut env: Vec<(String, String)> = Vec::new();
        for fake in &fakes {
            let pairs = match fake {
                Fake::Monnify(f) => f.env(),
                Fake::Paystack(f) => f.env(),
            };
            env.extend(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let server = TestServer::spawn_with_env(Options::default(), &env).await;
        Setup { server, fakes }
    }

    pub fn monnify(&self) -> &FakeMonnify {
        match &self.fakes[0] {
            Fake::Monnify(fake) => fake,
            Fake::Paystack(_) => unreachable!(),
        }
    }

    pub fn cli(&self, args: &[&str]) -> Value {
        self.server.cli(args)
    }

    pub fn reserve(&self, fake: &Fake, account_id: &str) -> Value {
        let args = [
            "funding",
            "reserve",
            "--account",
            account_id,
            "--gateway",
            fake.name(),
        ];
        let args: Vec<&str> = args.into_iter().chain(["--bvn", "22212345678"]).collect();
        self.cli(&args)
    }

    /// A new customer (empty wallet) with accounts reserved at `fake`; the first account's number.
    pub async fn customer_with_account(&self, fake: &Fake) -> (Customer, String) {
        let customer = self.server.customer("0");
        let reserved = self.reserve(fake, &customer.account_id);
        let number = reserved["accounts"][0]["account_number"].as_str();
        let number = number
            .unwrap_or_else(|| panic!("no account: {reserved}"))
            .to_owned();
        (customer, number)
    }

    pub async fn post_raw(
        &self,
        fake: &Fake,
        body: Vec<u8>,
        signature: Option<&str>,
    ) -> (u16, Value) {
        let url = self.server.url(&format!("/callbacks/{}", fake.name()));
        let mut request = self
            .server
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(signature) = signature {
            request = request.header(fake.signature_header(), signature);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        (status, body)
    }

    pub async fn post_webhook(
        &self,
        fake: &Fake,
        (body, signature): (Vec<u8>, String),
    ) -> (u16, Value) {
        self.post_raw(fake, body, Some(&signature)).await
    }

    /// The same webhook `times` times at once.
    pub async fn post_at_once(
        &self,
        fake: &Fake,
        (body, signature): (Vec<u8>, String),
        times: usize,
    ) -> Vec<(u16, Value)> {
        let url = self.server.url(&format!("/callbacks/{}", fake.name()));
        let tasks: Vec<_> = (0..times)
            .map(|_| {
                let request = self
                    .server
                    .http
                    .post(&url)
                    .header(fake.signature_header(), &signature)
                    .body(body.clone());
                tokio::spawn(async move {
                    let response = request.send().await.unwrap();
                    let status = response.status().as_u16();
                    (status, response.json::<Value>().await.unwrap())
                })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        answers
    }
}

#[allow(dead_code)]
const KEYS: [&str; 2] = [monnify::SECRET_KEY, paystack::SECRET_KEY];
