from __future__ import annotations

from kestrel_door.bearers import bearer_digest, mint_bearer, well_formed_bearer


def test_a_minted_bearer_is_well_formed_for_its_prefix_only() -> None:
    token = mint_bearer("kestrel_x_")
    assert token.startswith("kestrel_x_")
    assert len(token) == len("kestrel_x_") + 43
    assert well_formed_bearer(token, "kestrel_x_")
    assert not well_formed_bearer(token, "kestrel_y_")
    assert mint_bearer("kestrel_x_") != token


def test_shapes_that_are_refused_before_any_lookup() -> None:
    token = mint_bearer("p_")
    assert not well_formed_bearer(token[:-1], "p_")
    assert not well_formed_bearer(token + "A", "p_")
    assert not well_formed_bearer("q_" + token[2:], "p_")
    assert not well_formed_bearer(None, "p_")
    assert not well_formed_bearer(token.encode(), "p_")


def test_the_digest_is_the_sha256_of_the_token() -> None:
    assert bearer_digest("abc").hex() == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
