//! The cards `ls` and `ls --watch` show of questions that take a decision or
//! choices: built here from each question's request
//! (`needs_you_core::classify::card::to_sign`, the page's builder too), in
//! place of the words, options and lasting choices the server wrote, so
//! that what the owner reads is what `answer` signs for. And the words an
//! agent's machine sealed ([`needs_you_core::words`]), of questions, rules
//! and the history, opened here with the content key this command line
//! holds, since the server cannot read them.

use std::collections::HashMap;

use needs_you_core::afar::{Afar, AnswerBody};
use needs_you_core::api::{Listed, Question, Rule, Task};
use needs_you_core::classify::card::{self, ToSign};
use needs_you_core::request::Request;
use needs_you_core::sealed::{field, open_scope, SealedText};
use needs_you_core::words::{RuleWords, Words};
use needs_you_reporter::client::Client;
use needs_you_trust::sealing::{open, seal, ContentKey, ContentKeys};
use serde_json::Value;

use super::path_part;
use crate::content_keys;
use crate::login::Login;

/// Why words, a card or an answer could not be opened, built or sealed
/// here: said beside what is shown instead ("(sealed: …)"), or before
/// "not answered".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unopened(pub String);

impl std::fmt::Display for Unopened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Unopened {
    fn from(why: String) -> Unopened {
        Unopened(why)
    }
}

impl From<&str> for Unopened {
    fn from(why: &str) -> Unopened {
        Unopened(why.to_owned())
    }
}

/// What was made here of one question: its sealed words opened, and the
/// card of what takes a decision or choices.
struct Made {
    words: Option<Words>,
    card: Option<ToSign>,
}

/// Cards built and words opened, by question id, with what the list said of
/// the question when each was made (its open and digest): a question
/// opened again is made again; each is fetched once while it stays.
pub struct Built {
    made: HashMap<String, (String, Result<Made, Unopened>)>,
    login: Login,
    /// The content key, read at the first sealed question.
    keys: Option<ContentKeys>,
    /// The version each question's words opened here were sealed under, by
    /// question id: its answer's words are sealed under the same.
    versions: HashMap<String, u32>,
}

impl Built {
    pub fn new(login: &Login) -> Built {
        Built {
            made: HashMap::new(),
            login: login.clone(),
            keys: None,
            versions: HashMap::new(),
        }
    }

    /// `listed` as this command line shows it: sealed words opened here,
    /// and each question that takes a decision or choices with the card
    /// built here from its request; when that cannot be, taking no answer
    /// from here and saying why.
    pub fn shown(&mut self, client: &Client, listed: &[Listed]) -> Vec<Listed> {
        let ids: Vec<&str> = listed
            .iter()
            .map(|l| l.question.question_id.as_str())
            .collect();
        self.made.retain(|id, _| ids.contains(&id.as_str()));
        listed
            .iter()
            .map(|l| {
                let mut l = l.clone();
                self.apply(client, &mut l.question);
                let q = &mut l.question;
                q.task_name = self.task_name(
                    client,
                    &q.task_id,
                    q.task_sealed_name.as_deref(),
                    &q.task_name,
                );
                if let Some(a) = l.answer.as_mut() {
                    a.text = self.answer_text(
                        client,
                        &l.question.question_id,
                        a.sealed.as_deref(),
                        &a.text,
                    );
                }
                l
            })
            .collect()
    }

    fn apply(&mut self, client: &Client, q: &mut Question) {
        let form = q
            .answer_from_afar
            .filter(|f| matches!(f, Afar::Decision | Afar::Choices));
        if form.is_none() && !q.sealed {
            return;
        }
        let key = format!(
            "{}:{}:{}:{}",
            form.map_or("", Afar::as_str),
            q.open_seq,
            q.digest.as_deref().unwrap_or(""),
            q.sealed
        );
        let fresh = self
            .made
            .get(&q.question_id)
            .is_some_and(|(k, _)| *k == key);
        if !fresh {
            let made = self.make(client, q, form);
            self.made.insert(q.question_id.clone(), (key, made));
        }
        match &self.made[&q.question_id].1 {
            Ok(made) => {
                if let Some(words) = &made.words {
                    words.clone().restore(q);
                }
                if let Some(b) = &made.card {
                    q.text = b.text.clone();
                    q.options = b.options.clone();
                    q.questions = b.questions.clone();
                    q.decisions = b.lasting.clone();
                    q.digest = Some(b.digest.clone());
                }
            }
            Err(why) => {
                if q.sealed {
                    q.text = format!("Its words are sealed, and could not be opened here ({why}).");
                }
                q.answer_from_afar = None;
                q.why_not = Some(format!(
                    "its card could not be built here ({why}): answer it in the terminal"
                ));
            }
        }
    }

    fn make(
        &mut self,
        client: &Client,
        q: &Question,
        form: Option<Afar>,
    ) -> Result<Made, Unopened> {
        let (words, request) = self.request_of(client, q)?;
        let card = match form {
            Some(form) => {
                let request = request.ok_or("the server gave no request")?;
                // Built as the kind the form answers, never the kind the
                // server says: the machine takes that form for that kind only.
                Some(self.named(q, card::to_sign(form.kind(), &request))?)
            }
            None => None,
        };
        Ok(Made { words, card })
    }

    /// `q`'s request as the server keeps it, or, for a question whose words
    /// are sealed, as they open here (with the words, the card of a request
    /// they carry built here: [`Words::with_card`]): sealed for the open
    /// the list names, by the owner this command line is logged in under.
    pub fn request_of(
        &mut self,
        client: &Client,
        q: &Question,
    ) -> Result<(Option<Words>, Option<Request>), Unopened> {
        #[derive(serde::Deserialize)]
        struct Held {
            request: Option<Request>,
            sealed: Option<String>,
            open_seq: Option<u64>,
        }
        let id = path_part(&q.question_id).map_err(|f| f.message)?;
        let held: Held = client
            .get(&format!("/v1/questions/{id}/request"))
            .map_err(|f| f.message)?;
        if !q.sealed {
            return Ok((None, held.request));
        }
        // Listed as sealed: its words are the machine's or none, never the
        // server's in the clear.
        let sealed = held
            .sealed
            .ok_or("the server gave no sealed words for it")?;
        if held.open_seq != Some(q.open_seq) {
            return Err("the list is older than its words: list again".into());
        }
        let scope = open_scope(&q.session, q.open_seq);
        let plain = self.open(client, &scope, field::QUESTION, &sealed)?;
        let words: Words =
            serde_json::from_slice(&plain).map_err(|_| "its words opened, but are not words")?;
        let words = words.with_card(q.kind);
        if let Some(s) = SealedText::parse(&sealed) {
            self.versions.insert(q.question_id.clone(), s.version);
        }
        let request = words.request.clone();
        Ok((Some(words), request))
    }

    /// `card`, built here from `q`'s request, naming the request and its
    /// lasting choices as `q`'s machine named them: keyed under the version
    /// its words were sealed under when they are sealed
    /// ([`needs_you_trust::sealing::ContentKey::keyed`]), as they are
    /// otherwise. What is shown and signed.
    pub fn named(&self, q: &Question, mut card: ToSign) -> Result<ToSign, Unopened> {
        if !q.sealed {
            return Ok(card);
        }
        let (owner, key) = self.question_key(q)?;
        card.digest = key.keyed(&owner, &card.digest);
        for offer in &mut card.lasting {
            offer.id = key.keyed(&owner, &offer.id);
        }
        Ok(card)
    }

    /// The owner, and the version of the content key `q`'s words were
    /// sealed under, once they were opened here ([`Built::request_of`]):
    /// which its machine holds, whatever newer one this command line has.
    fn question_key(&self, q: &Question) -> Result<(String, &ContentKey), Unopened> {
        let key = self
            .versions
            .get(&q.question_id)
            .and_then(|v| self.keys.as_ref()?.version(*v))
            .ok_or("its words were not opened here")?;
        Ok((self.owner()?, key))
    }

    /// `rule` with its sealed words opened here, if they are sealed.
    pub fn rule(&mut self, client: &Client, mut rule: Rule) -> Rule {
        let Some(scope) = rule.sealed_scope.clone() else {
            return rule;
        };
        let opened = self
            .open(client, &scope, field::RULE, &rule.rule)
            .and_then(|p| serde_json::from_slice::<RuleWords>(&p).map_err(|_| "not a rule".into()));
        match opened {
            Ok(w) => (rule.label, rule.rule) = (w.label, w.rule),
            Err(why) => rule.rule = format!("(sealed: {why})"),
        }
        rule
    }

    /// `body`, an answer to `q`, with its words sealed here
    /// ([`field::ANSWER`], scope the question's id) under the version its
    /// own words were sealed under, once they were opened here
    /// ([`Built::request_of`]), which its machine holds whatever newer one
    /// this command line has: the answer with its words left out, and them
    /// sealed.
    pub fn seal_answer(
        &self,
        q: &Question,
        body: &AnswerBody,
    ) -> Result<(AnswerBody, String), Unopened> {
        let (owner, key) = self.question_key(q)?;
        let plain = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let sealed = seal(key, &owner, &q.question_id, field::ANSWER, &plain)
            .map_err(|e| format!("cannot seal the answer: {e}"))?;
        Ok((body.wordless(), sealed))
    }

    /// Task `task_id`'s name: `name`, as the server keeps it, or its `sealed`
    /// name opened here ([`field::TASK`]).
    pub fn task_name(
        &mut self,
        client: &Client,
        task_id: &str,
        sealed: Option<&str>,
        name: &str,
    ) -> String {
        let Some(sealed) = sealed else {
            return name.to_owned();
        };
        match self.open(client, task_id, field::TASK, sealed) {
            Ok(plain) => String::from_utf8_lossy(&plain).into_owned(),
            Err(why) => format!("(sealed: {why})"),
        }
    }

    /// `tasks` with their sealed names opened here.
    pub fn tasks(&mut self, client: &Client, tasks: &mut [Task]) {
        for t in tasks {
            t.name = self.task_name(client, &t.task_id, t.sealed_name.as_deref(), &t.name);
        }
    }

    /// What an answer to question `question_id` says for a person: `text`,
    /// as the server keeps it, or its `sealed` words opened here, as the
    /// list would say them in the clear.
    pub fn answer_text(
        &mut self,
        client: &Client,
        question_id: &str,
        sealed: Option<&str>,
        text: &str,
    ) -> String {
        let Some(sealed) = sealed else {
            return text.to_owned();
        };
        let opened = self
            .open(client, question_id, field::ANSWER, sealed)
            .and_then(|p| {
                serde_json::from_slice::<AnswerBody>(&p).map_err(|_| "not an answer".into())
            });
        match opened {
            Ok(body) => body.summary(),
            Err(why) => format!("{text} (sealed: {why})"),
        }
    }

    fn owner(&self) -> Result<String, Unopened> {
        self.login
            .owner
            .clone()
            .ok_or_else(|| "this login pins no owner, so it holds no content key".into())
    }

    /// What `sealed` holds, opened with the content key held here (read
    /// again once, for a version made since).
    fn open(
        &mut self,
        client: &Client,
        scope: &str,
        field: &str,
        sealed: &str,
    ) -> Result<Vec<u8>, Unopened> {
        let owner = self.owner()?;
        for fresh in [false, true] {
            if self.keys.is_none() || fresh {
                self.keys =
                    content_keys::on_this_device(&self.login, client).map_err(|f| f.message)?;
            }
            let keys = self
                .keys
                .as_ref()
                .ok_or("this command line holds no content key: log in with the line `needs-you pair` prints")?;
            if let Ok(plain) = open(keys, &owner, scope, field, sealed) {
                return Ok(plain);
            }
        }
        Err("no content key held here opens them".into())
    }

    /// A past question of the history, as JSON, with its sealed words and
    /// its rules' opened here; what does not open says so in its text.
    pub fn opened_past(&mut self, client: &Client, mut p: Value) -> Value {
        if let Some(rules) = p["rules"].as_array_mut() {
            for r in rules.iter_mut().filter(|r| r["sealed_scope"].is_string()) {
                if let Ok(rule) = serde_json::from_value::<Rule>(r.clone()) {
                    let opened = self.rule(client, rule);
                    r["rule"] = Value::String(opened.rule);
                    r["label"] = Value::String(opened.label);
                }
            }
        }
        let Ok(q) = serde_json::from_value::<Question>(p.clone()) else {
            return p;
        };
        let task = self.task_name(
            client,
            &q.task_id,
            q.task_sealed_name.as_deref(),
            &q.task_name,
        );
        p["task_name"] = Value::String(task);
        if let Some(answers) = p["answers"].as_array_mut() {
            for a in answers.iter_mut() {
                let text = self.answer_text(
                    client,
                    &q.question_id,
                    a["sealed"].as_str(),
                    a["text"].as_str().unwrap_or_default(),
                );
                a["text"] = Value::String(text);
            }
        }
        if q.sealed {
            match self.request_of(client, &q) {
                Ok((Some(words), _)) => {
                    let mut opened = q;
                    words.restore(&mut opened);
                    let mut opened = serde_json::to_value(&opened).unwrap_or_default();
                    for field in ["text", "options", "terminal"] {
                        p[field] = opened[field].take();
                    }
                    // Left out when there are none: a null is no list.
                    p["questions"] = match opened["questions"].take() {
                        Value::Null => Value::Array(Vec::new()),
                        questions => questions,
                    };
                }
                Ok((None, _)) => {}
                Err(why) => p["text"] = Value::String(format!("(sealed: {why})")),
            }
        }
        p
    }
}
