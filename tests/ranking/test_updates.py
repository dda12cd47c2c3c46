"""probable_update and probably_updated: which new facts restate an older one with another
value, and which only share its sentence pattern."""

from __future__ import annotations

import pytest

from shared.model import Hit, Memory, Scope
from shared.ranking import already_known
from shared.ranking.left_values import dropped_value
from shared.ranking.terse_notes import value_dropped
from shared.ranking.updates import (
    UpdateCheck,
    first_updated,
    linked_update,
    probable_update,
    probably_updated,
)
from shared.ranking.values import value_kind
from shared.ranking.wording import Wording, addition_marks, statements

FILLER = (
    "I have been looking at the dashboards this morning and nothing else stands out. The team "
    "agreed to keep the pull requests small so that reviews stay quick. Tests are green on the "
    "main branch and the coverage report looks fine. "
)


def hit(content: str, similarity: float, memory_id: str = "m", scope: Scope = "project") -> Hit:
    memory = Memory(
        id=memory_id,
        tenant="t",
        content=content,
        created_at="2026-01-01T00:00:00.000Z",
        scope=scope,
        conversation="chat:1" if scope == "conversation" else None,
    )
    return Hit(memory=memory, similarity=similarity)


@pytest.mark.parametrize(
    ("older", "newer", "evidence"),
    [
        (
            "The frontend is built with webpack.",
            "The frontend is built with vite since the rewrite.",
            "replaced",
        ),
        ("The API listens on port 8080.", "The API listens on port 9090 now.", "value"),
        (
            "We use Node 18 for the backend.",
            "The backend runs on Node 22 after the upgrade.",
            "value",
        ),
        ("Maria owns the billing service.", "Tom owns the billing service now.", "replaced"),
        ("The team standup is on Monday.", "The team standup moved to Wednesday.", "value"),
        ("Releases are cut every two weeks.", "Releases are cut every week now.", "value"),
        ("The cache TTL is 5 minutes.", "The cache TTL is 15 minutes.", "value"),
        (
            "Logging goes to Datadog.",
            "Logging no longer goes to Datadog; we use Grafana Loki.",
            "negation",
        ),
        ("The VPN is required for staging.", "The VPN is not required for staging.", "negation"),
        # A leading clause before the subject, where the change is announced.
        (
            "The webhook dispatcher retries failed deliveries 3 times.",
            "After the incident we raised the webhook dispatcher retry count to 7.",
            "value",
        ),
        (
            "The payments client uses a request timeout of 5 seconds.",
            "Actually, the payments client timeout is 15 seconds.",
            "value",
        ),
        # "from <what the older text said> to …" rewords everything else.
        (
            "The frontend uses Axios for all HTTP requests to the backend API.",
            "We switched the frontend from Axios to the native fetch API.",
            "value",
        ),
        # A value with its unit, an address and a name of several words are each one value.
        (
            "The password reset link expires after 30 days.",
            "The password reset link expires after 12 hours.",
            "value",
        ),
        (
            "The artifact store is reached at pkg.acme.dev.",
            "The artifact store is reached at registry.acme.io.",
            "value",
        ),
        ("The CEO of Microsoft is Satya Nadella.", "The CEO of Microsoft is Tim Cook.", "value"),
        # What the sentence is about named before its "is", the same in both.
        (
            "The native language of Aiko Tanaka is French.",
            "The native language of Aiko Tanaka is Greek.",
            "value",
        ),
        (
            "Port 9100 is where the websocket server accepts connections.",
            "Port 3000 is where the websocket server accepts connections.",
            "value",
        ),
        (
            "Nora Lindqvist's favourite sport is judo.",
            "Nora Lindqvist's favourite sport is now fencing.",
            "replaced",
        ),
        ("The standup is on Monday at 10am.", "The standup is on Tuesday at 10am.", "value"),
        # A name in the subject stands in both; the value after it changed.
        ("We bundle the admin UI with parcel.", "We bundle the admin UI with vite.", "replaced"),
        # The newer says nothing but the older's name, a change and its new value.
        ("Our Python version is 3.10.", "We upgraded Python to 3.12.", "value"),
        # Said of who cut what to which figure.
        (
            "Our cloud budget is $40k a month.",
            "Finance cut the cloud budget to $32k/month.",
            "value",
        ),
        # The newer restates only the subject, which the older reads as a name ("CI" inside
        # its sentence, first in the newer's; "Docs" inside "Read the Docs").
        ("Our CI runs on Jenkins.", "CI was migrated to GitHub Actions.", "value"),
        ("Docs are hosted on Read the Docs.", "Docs moved to GitHub Pages.", "value"),
        # The newer opens with what the older's value is said of across its "is".
        (
            "The max file size for attachments is 20 MB.",
            "Attachments can now be up to 50 MB.",
            "value",
        ),
        # A number with its unit in place of a word.
        (
            "The search index is rebuilt every hour.",
            "The search index is rebuilt every 10 minutes.",
            "replaced",
        ),
        # A word shared by its stem alone ("Errors" / "error").
        ("Our error tracker is Rollbar.", "Errors are tracked in Sentry now.", "value"),
        # The newer says which name it dropped, and rewords the rest.
        (
            "The ORM we use is SQLAlchemy.",
            "We dropped SQLAlchemy and use plain asyncpg queries.",
            "value",
        ),
        (
            "Support tickets go to Zendesk.",
            "Support tickets are handled in Intercom instead of Zendesk.",
            "value",
        ),
        (
            "Feature flags are managed in LaunchDarkly.",
            "We stopped using LaunchDarkly; feature flags live in Unleash.",
            "value",
        ),
        # A change said in a phrase: "went up to", "these days", "starting next week".
        ("The monthly plan costs $12.", "The monthly plan price went up to $15.", "value"),
        (
            "The nightly ETL job starts at 1 am.",
            "The ETL job kicks off at 3 am these days.",
            "value",
        ),
        (
            "Our error budget is 0.1% per month.",
            "The error budget is 0.5% from this quarter.",
            "value",
        ),
        ("Standup happens at 9:30.", "Standup is at 10:00 starting next week.", "value"),
        (
            "Our phone support runs on Aircall.",
            "Phone support is handled through Dialpad as of this month.",
            "value",
        ),
        # A name's possessive names its owner ("Quarry's API" is Quarry's).
        (
            "Quarry's API runs on Go 1.21.",
            "We upgraded the Go toolchain to 1.22 for all Quarry services.",
            "value",
        ),
        # What the newer text says it left: after ", not", or as "gone" or "out".
        (
            "The pricing service times out after 30 seconds.",
            "The pricing client times out after 10 seconds, not 30.",
            "value",
        ),
        (
            "Build alerts go to #ci-alerts in Slack.",
            "Build alerts actually go to #build-failures, not #ci-alerts.",
            "value",
        ),
        (
            "Orderbook stores its data in MySQL 5.7.",
            "Orderbook's migration to PostgreSQL 15 is done, so MySQL is gone.",
            "value",
        ),
        (
            "Error tracking for Lumen uses Sentry.",
            "Sentry is out; Lumen reports errors to Rollbar.",
            "value",
        ),
        # A name said to be shut down, archived or out of contract, another in its place:
        # the tool is what the older was about, however each sentence opens.
        (
            "Our tickets live in Tracklog.",
            "We're on Linear now, all new tickets go there. Tracklog's being archived.",
            "value",
        ),
        (
            "Sign-in is handled by Auth0.",
            "we moved login over to Clerk, Auth0 contract ended",
            "value",
        ),
        (
            "CI runs on Jenkins.",
            "Finished migrating CI to GitHub Actions, Jenkins gets shut down Friday.",
            "value",
        ),
        # A sentence that opens on what was dropped is about what follows it.
        (
            "Builds for the Atlas repo run on CircleCI.",
            "We ditched CircleCI for Buildkite on Atlas.",
            "value",
        ),
        # A terse note of something done, in other words: the older's subject said again and a
        # value of its kind in place of the older's.
        (
            "Search nodes are r5.large instances.",
            "resized the search nodes to r6g.xlarge last night",
            "value",
        ),
        (
            "The deploy window is 10:00 UTC on weekdays.",
            "we pushed the deploy window to 14:00 UTC, support asked for it",
            "value",
        ),
        # A capital letter that labels a room is a value ("d" is a stop word lower-cased).
        ("The conference talk is scheduled for Hall B.", "Our talk was moved to Hall D.", "value"),
        # "will be in Lisbon": the retreat is what the sentence is about, not the noun the city
        # is given for.
        (
            "The company retreat will be in Lisbon.",
            "The retreat location changed to Porto.",
            "value",
        ),
        (
            FILLER + "The auth proxy runs on port 9090 in staging.",
            FILLER + "The auth proxy now listens on port 8443.",
            "value",
        ),
        # A time of day said as a word is a time, like the one given in figures.
        (
            "The billing cron job runs at midnight.",
            "The billing cron job was moved to 3am.",
            "value",
        ),
        (
            "The board meeting is on the 14th.",
            "The board meeting was brought forward to the 9th.",
            "value",
        ),
        (
            "User data is stored in MongoDB.",
            "User data lives in PostgreSQL after the migration.",
            "value",
        ),
        # The older's provider switched off, or its account closed.
        (
            "We host everything on Heroku.",
            "As of last week we're fully on AWS (ECS + RDS) and Heroku's been shut off.",
            "value",
        ),
        (
            "Payments go through Braintree.",
            "All billing runs through Stripe now; the Braintree account is closed.",
            "value",
        ),
        # The person the older names has left the role.
        ("The QA lead is Anika.", "Anika left; the QA lead is Pavel.", "value"),
        (
            "Our main contact at Northwind is Lena Fischer.",
            "Lena left Northwind; Tom Okafor is our point of contact.",
            "value",
        ),
        (
            FILLER + "The auth proxy runs on port 9090 in staging.",
            FILLER + "```\nport: 8443\n```\nThe auth proxy now listens on port 8443.",
            "value",
        ),
    ],
)
def test_an_update_is_found_with_its_evidence(older: str, newer: str, evidence: str) -> None:
    found = probable_update(newer, older)
    assert found is not None and found.evidence == evidence


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # Another subject in the same sentence pattern.
        ("Anna was born in Oslo.", "Omar was born in Oslo."),
        ("The API service listens on port 8080.", "The metrics service listens on port 9100."),
        (
            "Port 9100 is where the search service accepts connections.",
            "Port 9100 is where the API accepts connections.",
        ),
        ("We use Node 18 for the ingest worker.", "We use Node 22 for the CI image."),
        ("The frontend uses React.", "The backend uses Django."),
        ("The bus goes from Oslo to Bergen.", "The train goes from Oslo to Stockholm."),
        # A possessive, a channel and a correction say the same of another subject.
        ("Kestrel's API runs on port 8080.", "Falcon's API runs on port 8080."),
        ("Nora Lindqvist's favourite sport is judo.", "Omar Haddad's favourite sport is fencing."),
        ("The deploy bot posts to #deploys.", "The release bot posts to #releases."),
        ("The Orion API is written in Go, not Rust.", "The Orion worker is written in Rust."),
        # A note of something done keeps the attribute, not what the older text is about; a
        # day is no version; a chat turn's "since we last spoke" announces no change of a fact;
        # "added" reports something new beside the rest.
        (
            "The webhook dispatcher retries a failed call four times.",
            "We raised the retries of the email sender to 5.",
        ),
        (
            "The deploy freeze starts the Thursday before each launch.",
            "We skipped the deploy freeze for the 3.1 patch.",
        ),
        (
            "Caroline: Family is everything to me.",
            "Caroline: Since we last spoke, big things happened. I went to a pride parade.",
        ),
        (
            "Search nodes are r5.large instances.",
            "We added r6g.xlarge search nodes for the reindex.",
        ),
        # One identifier for another names another thing (another incident, another ticket).
        (
            "Checkout failed during the deploy because of E1042; we rolled back.",
            "Checkout failed during the deploy because of E1024; we rolled back.",
        ),
        # Another subject named before the sentence's "is", the value the same or another:
        # content words alone run the two changes together ("… Mehta is Arabic").
        (
            "The native language of Arjun Mehta is Arabic.",
            "The native language of Liam Walsh is French.",
        ),
        (
            "The native language of Omar Haddad is Thai.",
            "The native language of Lucia Romero is Thai.",
        ),
        (
            "The CEO of Granite Insurance is George Adams.",
            "The CEO of Corvid Analytics is George Adams.",
        ),
        ("The CEO of Microsoft is Satya Nadella.", "The CEO of Apple is Tim Cook."),
        ("The headquarters of Toyota is in Tokyo.", "The headquarters of Honda is in Tokyo."),
        (
            "The native language of Arjun Mehta is Arabic.",
            "The native language of Leila Karimi is now Portuguese.",
        ),
        (
            "Oscar Lind is married to Daniel Moreau.",
            "Rafael Souza is now married to Daniel Moreau.",
        ),
        # Two places of one sentence changed, a stop word between them.
        ("The API listens on port 8080 in Staging.", "The API listens on port 9090 in Production."),
        # The same value said of something else: the change stands before it.
        ("We deploy the billing service on Friday.", "We deploy the search service on Friday."),
        # A flag for another flag names another thing, whatever stands before it.
        (
            "Checkout failed during the evening deploy because of --drain-cache.",
            "Checkout failed during the evening deploy because of --drain-queue.",
        ),
        # The same subject, another attribute.
        ("The API listens on port 8080.", "The API times out after 30 seconds."),
        # The newer opens with the noun the older's value is given for: another thing's port.
        ("The admin dashboard runs on port 9090.", "We changed the port of the API to 4000."),
        # A name and a word in place of a word is another thing, not a number with its unit.
        ("We use Node 18 for the CI image.", "We use Node 18 for the backend."),
        (
            "The CEO of Bluepeak Software is Ingrid Berg.",
            "Bluepeak Software is now registered in Chile.",
        ),
        # A reply that says much else beside a negation denies nothing.
        (
            "Sam: Wow! That sounds fun.",
            "Sam: Wow, sounds fun! Can't wait to see the band play at the festival next month.",
        ),
        (
            "Priya: That trip sounds amazing.",
            "Priya: That trip sounds amazing, I never managed to visit the coast, the mountains or "
            "the old harbour town.",
        ),
        # Another name spoken to is the same small talk to someone else.
        ("Sam: Hey Mel! The garden looks great.", "Sam: Hey Priya! The garden looks great."),
        ("Ava: That's great news, Ben!", "Ava: That's great news, Chloe!"),
        # A question states nothing to update or be updated.
        ("Which port does the API listen on?", "The API listens on port 9090 now."),
        ("Ravi: Is the standup still on Monday?", "Ravi: The standup moved to Wednesday."),
        ("The API listens on port 8080.", "Does the API listen on port 9090 now?"),
        # A value asked about beside a statement is not said to be so.
        ("we're on python 3.11", "Should we move to Python 3.12? The perf numbers look decent."),
        # Hours that become a provider's name: another attribute of the same subject.
        (
            "The support phone line is open 9 to 5.",
            "Phone support is handled through Dialpad as of this month.",
        ),
        # A second value beside the first, not instead of it.
        ("Anna likes tea.", "Anna likes coffee too."),
        ("The API listens on port 8080.", "The API listens on port 9090 as well."),
        # Nothing changed: the same fact, or nothing in common.
        ("The API listens on port 8080.", "The API listens on port 8080."),
        ("Deploys run nightly.", "Invoices are sent on the first of the month."),
        # Long texts: a line of code is no statement of fact.
        (
            FILLER + "    const token = jwt.sign({ userId: 1 }, secret, { expiresIn: '1h' });",
            FILLER + "    const token = jwt.sign({ userId: 2 }, secret, { expiresIn: '2h' });",
        ),
        (
            FILLER + "The admin dashboard listens on port 8443.",
            FILLER + "The auth proxy listens on port 7001.",
        ),
        # A fenced block and a comment line are code, whatever their words.
        (
            FILLER + "Build the image with:\n```\nRUN pip install -r requirements.txt\n```",
            FILLER
            + "Build the image with:\n```\nRUN pip install --no-cache-dir -r requirements.txt\n```",
        ),
        (
            FILLER
            + "# Authorize inbound traffic on port 6000\nThe firewall keeps the rest closed.",
            FILLER
            + "# Authorize inbound traffic on port 7000\nThe firewall keeps the rest closed.",
        ),
        # Someone who left a meeting is still what the older says of them.
        ("The QA lead is Anika.", "Anika left the standup early; Pavel ran it."),
        # What was so before, may be so one day, or is so once.
        ("Sam owns the billing service.", "Before Sam, the billing service was owned by Rita."),
        ("The help desk number is 555-0147.", "Back in 2021 the help desk number was 555-0199."),
        ("Prod DB is on Postgres 14.", "We might move the prod DB to Postgres 16 next year."),
        (
            "Design review is every Tuesday in the Oak room.",
            "This week only, design review is in Cedar since Oak is being painted.",
        ),
        (
            FILLER + "The auth proxy runs on port 9090 in staging.",
            FILLER + "We might change it so that the auth proxy runs on port 8443 in staging.",
        ),
        # What is closed is no value of the older.
        ("The Singapore office is at 8 Marina View.", "The Singapore office is closed on Fridays."),
        # Another time of another job.
        ("The billing cron job runs at midnight.", "The cleanup cron job was moved to 3am."),
        # The same figure said of something else: another attribute, however announced.
        (
            "The upload URL expires after 30 days.",
            "The upload URL now keeps its logs for 30 days.",
        ),
        (
            FILLER + "The lifetime of the API token is 30 days.",
            FILLER + "The API token now keeps its logs for 30 days.",
        ),
        # A time of day and a duration beside the same word; "lasts" is no "last".
        ("Standup is at 9:30.", "Standup lasts 15 minutes."),
        # Out for a while, not for good.
        ("The team lead for mobile is Aiko.", "Aiko is out on vacation until the 14th."),
        # A file is no tool that took another's place.
        (
            "Frontend builds with Webpack.",
            "Switched the frontend to pnpm, please stop committing package-lock.json.",
        ),
    ],
)
def test_a_same_pattern_distractor_is_not_an_update(older: str, newer: str) -> None:
    assert probable_update(newer, older) is None


def test_a_number_word_is_a_value_only_as_written() -> None:
    assert "last" in Wording("Retro is on the last Friday of the month.").values
    assert "last" not in Wording("Standup lasts 15 minutes.").values
    assert "second" not in Wording("The timeout is 30 seconds.").values


def test_a_figure_in_a_loosely_read_slot_still_changes() -> None:
    """A room or a rate whose words tell only the word before it is read too loosely to keep
    two figures apart."""
    assert probable_update(
        "The mobile team meets in room 2A now.", "The mobile team meets in room 4B."
    )
    assert probable_update(
        "bumped the public rate limit to 300/min per key",
        "Public API rate limit is 100 requests per minute per key.",
    )


def test_a_name_spoken_to_is_not_read_as_the_value_but_a_day_after_a_comma_is() -> None:
    found = probable_update("The standup moved to Friday, Tom.", "The standup is on Monday.")
    assert found is not None and (found.old, found.new) == (("monday",), ("friday",))


def test_one_check_reads_the_new_text_once_for_many_older_ones() -> None:
    check = UpdateCheck("The API listens on port 9090 now.")
    assert check.of("The API listens on port 8080.") is not None
    assert check.of("Anna was born in Oslo.") is None


def test_the_nearest_memory_with_evidence_is_the_one_updated() -> None:
    hits = [
        hit("The API times out after 30 seconds.", 0.95, "other-attribute"),
        hit("The API listens on port 8080.", 0.80, "updated"),
        hit("The API listens on port 7000 in the sandbox.", 0.60, "farther"),
    ]
    found = probably_updated("The API listens on port 9090 now.", hits, scope="project")
    assert found is not None and found.memory.id == "updated"


def test_a_conversation_note_never_updates_a_project_memory() -> None:
    project = hit("The API listens on port 8080.", 0.9, "project")
    note = hit("The API listens on port 8081.", 0.8, "note", scope="conversation")
    new = "The API listens on port 9090 now."
    assert probably_updated(new, [project], scope="conversation") is None
    found = probably_updated(new, [project, note], scope="conversation")
    assert found is not None and found.memory.id == "note"
    assert probably_updated(new, [], scope="project") is None


def test_a_long_text_is_read_for_an_update_but_never_linked() -> None:
    """Dedup reads a long text sentence by sentence (a revision is no duplicate); remember
    links texts read whole only, on either side."""
    older, newer = (
        FILLER + "The API listens on port 8080.",
        FILLER + "The API listens on port 9090 now.",
    )
    assert probable_update(newer, older) is not None
    assert linked_update(newer, older) is None
    assert linked_update("The API listens on port 9090 now.", "The API listens on port 8080.")
    assert first_updated(newer, [hit(older, 0.9, "long").memory], scope="project") is None
    short = hit("The API listens on port 8080.", 0.9, "short")
    assert probably_updated(newer, [short], scope="project") is None
    assert (
        probably_updated(
            "The API listens on port 9090 now.", [hit(older, 0.9, "l")], scope="project"
        )
        is None
    )
    found = probably_updated("The API listens on port 9090 now.", [short], scope="project")
    assert found is not None and found.memory.id == "short"


def test_an_update_that_reads_like_a_resend_is_not_already_known() -> None:
    """ "every two weeks" → "every week now" clears dedup's cosine and word overlap, and has no
    digit to tell them apart: it is stored as the update it is, not dropped."""
    old = hit("Releases are cut every two weeks.", 0.95)
    assert already_known("Releases are cut every week now.", [old]) is None
    assert already_known("Releases are cut every two weeks!", [old]) is not None


@pytest.mark.parametrize(
    ("text", "says_a_change"),
    [
        ("The price went up to $15.", True),
        ("Retention went down by 10%.", True),
        ("We went up to the Rocky Mountains.", False),  # a trip, not a rise
        ("The quota was cut to 10 GB.", True),
        ("Finance cut the cloud budget to $32k/month.", True),
        ("We cut releases every 2 weeks.", False),  # no figure it was cut to
        ("Backend hiring got cut to a single open req.", True),  # a figure in words
        ("The team went down to two people.", True),
        ("Let's cut to the chase.", False),
        ("We renegotiated Datadog down to $71,500 a year.", True),
        ("Warsaw QA is down to four testers.", True),
        ("We walked down to the river.", False),
        ("The release was pushed back to May.", True),
        ("The ETL job runs at 3 am these days.", True),
        ("Going forward, invoices go out on the 5th.", True),
        ("As of March, billing runs on Stripe.", True),
        ("Standup is at 10:00 starting next week.", True),
        ("As of today the wiki is in Notion.", True),
        ("As of my training data, the API was in beta.", False),  # a hedge, not a time
        ("I have a lot of photos from this trip.", False),
        ("prod's on fly.io as of this morning", True),
        ("Starting tonight the backups run on the new NAS.", True),
        ("We cut the static assets over to Fastly.", True),
        ("Releases are cut every two weeks, over to you.", False),  # no cutover
        ("The board meeting was brought forward to the 9th.", True),
        ("The launch moved forward by a week.", True),
        ("User data lives in PostgreSQL after the migration.", True),
        ("The logo is green since the rebrand.", True),
        ("The migration guide is in the wiki.", False),  # the event named, no change said
    ],
)
def test_a_change_said_in_a_phrase_is_read_as_its_one_word_mark(
    text: str, says_a_change: bool
) -> None:
    assert Wording(text).announces(Wording("Nothing to add here.")) is says_a_change


@pytest.mark.parametrize(
    ("text", "adds"),
    [
        ("Anna likes coffee too.", True),
        ("We use Redis too, for sessions.", True),
        ("There is also a second staging box.", True),
        ("Standup moved to 10:15, too many people were late.", False),  # a degree
        ("The build is too slow on CI.", False),
        ("I am into cars too and love making models.", True),  # the clause ends
    ],
)
def test_too_is_an_addition_at_the_end_of_a_clause_and_a_degree_before_a_word(
    text: str, adds: bool
) -> None:
    assert bool(addition_marks(text)) is adds


@pytest.mark.parametrize(
    ("text", "adds"),
    [
        # A clause that opens with what came first tells the cause of what is so now.
        ("Since adding the index, the orders query takes 40ms.", False),
        ("After adding an extra replica, checkout p99 is 300ms.", False),
        # An addition said after that clause is still one.
        ("After the migration we also run a nightly job.", True),
        ("Once that's done, we'll add another replica too.", True),
    ],
)
def test_an_addition_in_a_clause_telling_what_came_first_is_no_addition(
    text: str, adds: bool
) -> None:
    assert bool(addition_marks(text)) is adds


def test_a_short_text_adds_with_adding_and_extra_a_long_one_does_not() -> None:
    slot = "We're adding an extra design review slot Fridays at 11."
    assert Wording(slot).adds_to(Wording("Design reviews happen Wednesdays at 1pm."))
    message = FILLER + "I'm adding error handling, and the extra retries made the job pass."
    assert not Wording(message).adds_to(Wording(FILLER + "The job fails on every retry."))


def test_a_capital_letter_inside_a_sentence_is_a_label_and_an_article_is_not() -> None:
    assert "d" in Wording("Our talk was moved to Hall D.").values
    assert not Wording("A new plan is ready.").values
    assert not Wording("Then I said I was sure.").values


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        (
            "Should we move to Python 3.12? The perf numbers look decent.",
            "The perf numbers look decent.",
        ),
        ("Hey! What did you get?\nI got a dog.", "Hey! I got a dog."),
        ("We use Python 3.11.", "We use Python 3.11."),
        ("Is the standup still on Monday?", ""),
    ],
)
def test_a_text_read_for_what_it_states_leaves_its_questions_out(text: str, stated: str) -> None:
    assert statements(text) == stated


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "db backups are kept for 14 days",
            "Compliance asked for longer retention, so we keep database backups 30 days now.",
        ),
        ("The prod cluster has 6 nodes.", "We scaled the production cluster to 9 nodes."),
        (
            "The repo config lives in settings.toml.",
            "The repository configuration moved to pyproject.toml.",
        ),
        ("db backups run at 2am.", "Database backups moved to 4am."),
    ],
)
def test_a_short_form_and_the_word_written_out_are_one_subject(older: str, newer: str) -> None:
    assert probable_update(newer, older) is not None


def test_a_short_form_keeps_another_subject_apart() -> None:
    older = "The staging db has 2 replicas."
    assert probable_update("The production database has 4 replicas now.", older) is None


def test_a_value_dropped_links_alone_between_short_texts() -> None:
    older = "We lint Python with flake8."
    assert probable_update("ruff replaced flake8 and isort", older) is not None
    # Whom the older is about, dropped, says nothing of where they were born.
    born = Wording("Omar Haddad was born in Oslo.")
    assert value_dropped(Wording("We dropped Haddad from the speaker list."), born) is None
    assert value_dropped(Wording("We dropped Oslo from the tour."), born) is not None


def test_alternatives_ruled_out_after_a_comma_are_no_value_left() -> None:
    """ ", not X" corrects X; ", not X or Y" says what something does not work with."""
    older = Wording(
        "Selected the Hybrid storage backend as the recommended production configuration."
    )
    scope = Wording("Exports only work with the sqlite_vec backend, not hybrid or cloudflare.")
    assert dropped_value(scope, older) is None
    corrected = Wording("The recommended backend is sqlite_vec, not hybrid.")
    assert dropped_value(corrected, older) == "hybrid"


def test_a_value_dropped_inside_a_long_text_is_not_read_alone() -> None:
    older = "We lint Python with flake8."
    newer = FILLER + "The old ticket said we replaced flake8 somewhere, but nobody remembers."
    assert probable_update(newer, older) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Default branch is master.", "Renamed master to main, update your remotes."),
        (
            "The public load balancer is a self-managed nginx box.",
            "replaced our hand-rolled nginx LB with an AWS ALB",
        ),
        (
            "Python tests are written with unittest.",
            "We converted the old unittest suites, it's pytest everywhere now.",
        ),
    ],
)
def test_a_plain_word_the_newer_says_it_replaced_links(older: str, newer: str) -> None:
    """A tool or a branch written in lower case is no value to the word rules; said to be
    replaced, renamed or converted, it is the older's value all the same."""
    assert value_dropped(Wording(newer), Wording(older)) is not None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # What the older is about, renamed: the older's fact of it still holds.
        ("The repo is hosted on GitHub.", "Renamed the repo to acme-api."),
        # A word of the older the newer only mentions, not one it replaced.
        (
            "Default branch is master.",
            "Replaced the CI badge with a link; master builds are green.",
        ),
    ],
)
def test_a_word_not_said_to_be_replaced_is_no_value_dropped(older: str, newer: str) -> None:
    assert value_dropped(Wording(newer), Wording(older)) is None


@pytest.mark.parametrize(
    ("term", "kind"),
    [
        ("package-lock.json", "file"),
        ("~/.zshrc.d/aliases.zsh", "file"),
        ("values.yaml", "file"),
        ("node.js", "name"),
        ("fly.io", "name"),
        ("webpack", "name"),
        ("3.12", "figure"),
        ("friday", "calendar"),
    ],
)
def test_a_file_is_a_kind_of_its_own(term: str, kind: str) -> None:
    assert value_kind(term) == kind
