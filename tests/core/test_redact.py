"""Credentials never reach what is recorded or printed: URLs, free text, nested configs, MLflow params, logs."""

import logging

import pytest

from interlingua.core.params import flatten
from interlingua.core.redact import MASK, install_log_redaction, is_secret_key, redact, redact_text, redact_url


@pytest.mark.parametrize("url, expected", [
    ("http://user:password@host/f?token=abc&lang=en", "http://***@host/f?token=***&lang=en"),
    ("https://TOKEN123@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
    ("s3://bucket/key.parquet?X-Amz-Signature=aa&X-Amz-Credential=bb&part=1",
     "s3://bucket/key.parquet?X-Amz-Signature=***&X-Amz-Credential=***&part=1"),
    ("https://acct.blob.core.windows.net/c/f?sv=2020-08-04&sig=zz%2Bq", "https://acct.blob.core.windows.net/c/f?sv=2020-08-04&sig=***"),
    ("https://h/p?api_key=1&apikey=2&key=3&secret=4&password=5&access_token=6&q=7",
     "https://h/p?api_key=***&apikey=***&key=***&secret=***&password=***&access_token=***&q=7"),
    ("https://h/cb#access_token=abc&state=x", "https://h/cb#access_token=***&state=x"),
    ("/local/data/raw.en", "/local/data/raw.en"),
    ("hf://datasets/org/name", "hf://datasets/org/name"),
])
def test_urls_lose_user_info_and_credential_like_query_parameters(url, expected):
    assert redact_url(url) == expected
    assert redact_text(url) == expected


def test_free_text_masks_urls_and_secret_pairs_but_not_lookalikes():
    text = ("cannot open http://u:hunter2@h/f?token=s3cr3t: 403; password=hunter2 api_key: abc "
            "AWS_SECRET_ACCESS_KEY=zzz max_tokens=5 keys=3 sort_key=id")
    out = redact_text(text)
    for secret in ("hunter2", "s3cr3t", "abc", "zzz"):
        assert secret not in out
    assert "max_tokens=5" in out and "sort_key=id" in out and "keys=3" in out


def test_nested_values_mask_secret_keys_and_urls_everywhere():
    config = {"source": "http://u:p@h/f?token=t", "max_tokens": 256, "sort_key": "id",
              "storage_options": {"key": "AKIA", "secret": "s", "client_kwargs": {"endpoint_url": "http://a:b@minio"}},
              "inputs": ["s3://b/x?X-Amz-Signature=q", "/plain"], "password": None}
    out = redact(config)
    assert out == {"source": "http://***@h/f?token=***", "max_tokens": 256, "sort_key": "id",
                   "storage_options": {"key": MASK, "secret": MASK, "client_kwargs": {"endpoint_url": "http://***@minio"}},
                   "inputs": ["s3://b/x?X-Amz-Signature=***", "/plain"], "password": None}
    assert config["source"].startswith("http://u:p@")  # the caller's value is untouched
    assert [k for k in ("token", "apiKey", "api_key", "X-Amz-Date", "client_secret", "sig") if is_secret_key(k)] == \
        ["token", "apiKey", "api_key", "X-Amz-Date", "client_secret", "sig"]
    assert not any(is_secret_key(k) for k in ("max_tokens", "sort_key", "monkey", "keys_file", "tokenizer"))


def test_mlflow_params_from_flatten_hold_no_credentials():
    params = flatten({"source": "http://u:pw@h/f?sig=abc", "train": {"lr": 1e-4, "api_key": "k"}})
    assert params == {"source": "http://***@h/f?sig=***", "train.lr": 1e-4, "train.api_key": MASK}


def test_log_records_are_redacted_with_their_arguments(caplog):
    logger = logging.getLogger("interlingua.test_redact")
    install_log_redaction(logger)
    install_log_redaction(logger)  # idempotent
    assert sum(type(f).__name__ == "RedactingFilter" for f in logger.filters) == 1
    with caplog.at_level(logging.INFO, logger="interlingua.test_redact"):
        logger.info("reading %s with password=%s", "https://u:pw@h/f?token=t", "hunter2")
    assert caplog.records[-1].getMessage() == "reading https://***@h/f?token=*** with password=***"


def test_model_card_masks_credentials_in_base_model_and_config():
    from interlingua.models.model_card import ModelCard

    card = ModelCard(base_model="s3://b/m?X-Amz-Signature=abc", objective="o", workflow="w",
                     config={"source": "http://u:pw@h/f", "storage_options": {"secret": "s"}},
                     description="sum of http://u:pw@h/f and s3://b/m?X-Amz-Signature=abc")
    text = card.to_markdown() + str(card.to_dict()) + str(card.tags())
    assert "abc" not in text and "pw@" not in text and '"secret": "***"' in text


@pytest.mark.parametrize("text, secret", [
    ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=SEC+RET/x==;EndpointSuffix=core.windows.net", "SEC+RET"),
    ("BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&ss=b&sig=SECRET%2B;x=y", "SECRET"),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=SECRET", "SECRET"),
    ("Server=db;Database=x;User Id=sa;Password={SE;CRET};Encrypt=yes", "CRET"),
    ("Driver={ODBC Driver 18};Server=db;Uid=me;Pwd=SECRET;", "SECRET"),
    ("Server=db;Password=\"SE CRET\";", "SE CRET"),
    ("?sv=2020-08-04&ss=b&srt=sco&sig=SECRET%3D&se=2030", "SECRET"),
    ("acct.blob.core.windows.net/c/f?sv=2020&sig=SECRET", "SECRET"),
])
def test_connection_string_and_sas_secrets_are_masked(text, secret):
    out = redact_text(text)
    assert secret not in out and MASK in out
    assert redact_text(out) == out  # idempotent
    assert secret not in str(redact({"conn": text}))


def test_connection_strings_keep_their_other_parts():
    out = redact_text("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc==;EndpointSuffix=core.windows.net")
    assert out == "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net"
    assert redact_text("Driver={ODBC};Uid=me;Pwd=x;") == "Driver={ODBC};Uid=me;Pwd=***;"


@pytest.mark.parametrize("text, expected", [
    ("cannot reach a Ray cluster at u:SECRET@127.0.0.1:1 (refused)", "cannot reach a Ray cluster at ***@127.0.0.1:1 (refused)"),
    ("--address 'u:SECRET@10.0.0.5:6379': expected HOST:PORT", "--address '***@10.0.0.5:6379': expected HOST:PORT"),
    ("--address=u:p@ss@head:6379", "--address=***@head:6379"),
    ("u:SECRET@head", "***@head"),
])
def test_scheme_less_user_and_password_is_masked(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("cannot reach a Ray cluster at SECRET@127.0.0.1:1 (refused)", "cannot reach a Ray cluster at ***@127.0.0.1:1 (refused)"),
    ("--address 'SECRET@head.svc.cluster.local:10001'.", "--address '***@head.svc.cluster.local:10001'."),
    ("--address=SECRET@head:6379", "--address=***@head:6379"),
    ("SECRET@[::1]:8265/api", "***@[::1]:8265/api"),
    ("SE@CRET@head:6379", "***@head:6379"),  # user-info holding '@': up to the last one
    ("redis://SECRET@cache:6379/0 and https://SECRET@h/x", "redis://***@cache:6379/0 and https://***@h/x"),
])
def test_scheme_less_token_before_host_and_port_is_masked(text, expected):
    """A bare ``token@host:port`` (a Ray or Redis address): a port follows the host, which no e-mail address has;
    ``scheme://token@host`` loses its user-info with or without a port."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected  # idempotent


@pytest.mark.parametrize("url, expected", [
    ("SECRET@10.0.0.5:6379", "***@10.0.0.5:6379"),
    ("u:SECRET@10.0.0.5:6379", "***@10.0.0.5:6379"),
    ("ray://SECRET@head:10001", "ray://***@head:10001"),
    ("me@example.com", "me@example.com"),
])
def test_redact_url_masks_a_scheme_less_address_s_user_info(url, expected):
    assert redact_url(url) == expected


@pytest.mark.parametrize("text", ["me@example.com", "write to me@example.com: it answers", "me@example.com:",
                                  "ops@example.com:8080x", "v@host:1.5", "img@sha256:1234",
                                  "mail me@example.com, or jo@example.org"])
def test_e_mail_addresses_are_left_alone(text):
    assert redact_text(text) == text
    assert redact(["x", {"contact": text}]) == ["x", {"contact": text}]


@pytest.mark.parametrize("text, expected", [
    ("http://alice:s3cr3t)@127.0.0.1:8765/src.txt", "http://***@127.0.0.1:8765/src.txt"),
    ("model URL 'https://alice:p4ss,w0rd@127.0.0.1:1/enc' does not exist",
     "model URL 'https://***@127.0.0.1:1/enc' does not exist"),
    ("s3://AKIA:wJalr)@bucket/x", "s3://***@bucket/x"),
    ("ftp://u:it's(x)!$&*+;=@h:21/p, then", "ftp://***@h:21/p, then"),  # every sub-delim RFC 3986 allows
    ("http://u:p@ss)@[::1]:80/x", "http://***@[::1]:80/x"),  # up to the last '@' before the host
    ("https://h/p?token=ab,cd&lang=en", "https://h/p?token=***&lang=en"),
    ("fetch 'https://h/p?sig=ab(c)d' failed", "fetch 'https://h/p?sig=***' failed"),
    ("https://h/cb#access_token=ab,cd&state=x", "https://h/cb#access_token=***&state=x"),
])
def test_user_info_and_query_values_holding_sub_delims_are_masked_whole(text, expected):
    """RFC 3986 lets user-info hold ``!$&'()*+,;=`` and a query value ``,()``: none of it cuts the secret short."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected  # idempotent
    assert redact({"source": text}) == {"source": expected}


def test_mlflow_params_mask_a_password_holding_a_comma():
    assert flatten({"model": "https://alice:p4ss,w0rd@host/enc"}) == {"model": "https://***@host/enc"}


@pytest.mark.parametrize("text", ["(see http://h/docs), or write to me@example.com", "'http://h/x' or me@example.com",
                                  "http://h/a?q=1 and me@example.com:", "read http://h/x (mirror: ops@example.org)",
                                  "http://h/x?q=a,b(c)", "https://h/models:/enc@prod"])
def test_prose_around_urls_is_left_alone(text):
    assert redact_text(text) == text


@pytest.mark.parametrize("text", ["git@github.com:org/repo.git", "models:/enc@prod", "me@example.com at 10:30",
                                  "design=1 signal: 9 max_tokens=5", "ray start --address=10.0.0.5:6379",
                                  "AccountName=acct;EndpointSuffix=core.windows.net", "ubuntu:22.04@sha256:ab12"])
def test_lookalikes_of_credentials_are_left_alone(text):
    assert redact_text(text) == text


def test_a_corpus_input_record_is_left_alone():
    """corpus-mix and hard-negatives record a source corpus as ``corpus:NAME@v-HEX``: not ``user:password@host``."""
    text = "inputs corpus:tiny-bitext@v-0a67232bde49, corpus:b.c_d@v-12"
    assert redact_text(text) == text
    assert redact_text("corpus:hunter2@v-host.example.com") == "***@v-host.example.com"
    assert redact_text("corpus:hunter2@db:5432") == "***@db:5432"
