//! The cards `ls` and `ls --watch` show of questions that take a decision or
//! choices: built here from each question's request
//! (`needs_you_core::classify::card::to_sign`, the page's builder too), in
//! place of the words, options and lasting choices the server wrote, so
//! that what the owner reads is what `answer` signs for.

use std::collections::HashMap;

use needs_you_core::afar::Afar;
use needs_you_core::api::{Listed, Question};
use needs_you_core::classify::card::{self, ToSign};
use needs_you_core::request::Request;
use needs_you_reporter::client::Client;

use super::path_part;

/// Cards built, by question id, with what the list said of the question
/// when each was built (its open and digest): a question opened again is
/// built again; a card is fetched once while it stays.
#[derive(Default)]
pub struct Built(HashMap<String, (String, Result<ToSign, String>)>);

impl Built {
    /// `listed` as this command line shows it: each question that takes a
    /// decision or choices with the card built here from its request, or,
    /// when that cannot be, taking no answer from here and saying why.
    pub fn shown(&mut self, client: &Client, listed: &[Listed]) -> Vec<Listed> {
        let ids: Vec<&str> = listed
            .iter()
            .map(|l| l.question.question_id.as_str())
            .collect();
        self.0.retain(|id, _| ids.contains(&id.as_str()));
        listed
            .iter()
            .map(|l| {
                let mut l = l.clone();
                self.apply(client, &mut l.question);
                l
            })
            .collect()
    }

    fn apply(&mut self, client: &Client, q: &mut Question) {
        let Some(form @ (Afar::Decision | Afar::Choices)) = q.answer_from_afar else {
            return;
        };
        let key = format!(
            "{}:{}:{}",
            form.as_str(),
            q.open_seq,
            q.digest.as_deref().unwrap_or("")
        );
        let fresh = self.0.get(&q.question_id).is_some_and(|(k, _)| *k == key);
        if !fresh {
            let built = build(client, q, form);
            self.0.insert(q.question_id.clone(), (key, built));
        }
        match &self.0[&q.question_id].1 {
            Ok(b) => {
                q.text = b.text.clone();
                q.options = b.options.clone();
                q.questions = b.questions.clone();
                q.decisions = b.lasting.clone();
                q.digest = Some(b.digest.clone());
            }
            Err(why) => {
                q.answer_from_afar = None;
                q.why_not = Some(format!(
                    "its card could not be built here from its request ({why}): answer it in the terminal"
                ));
            }
        }
    }
}

/// The card of `q`, built from the request the server keeps for it, as the
/// kind of question `form` answers (never the kind the server says `q` is:
/// the machine takes that form for that kind only).
fn build(client: &Client, q: &Question, form: Afar) -> Result<ToSign, String> {
    #[derive(serde::Deserialize)]
    struct Held {
        request: Option<Request>,
    }
    let id = path_part(&q.question_id).map_err(|f| f.message)?;
    let held: Held = client
        .get(&format!("/v1/questions/{id}/request"))
        .map_err(|f| f.message)?;
    let request = held.request.ok_or("the server gave no request")?;
    Ok(card::to_sign(form.kind(), &request))
}
