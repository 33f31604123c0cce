import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


@pytest.fixture
def teardown_breaks():
    yield
    raise RuntimeError("teardown exploded")


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    print("captured output")
    assert 1 + 1 == 3, "arithmetic & <logic> broke"


def test_error(broken):
    pass


@pytest.mark.skip(reason="not on this platform")
def test_skip():
    pass


@pytest.mark.xfail(reason="known bug #12")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="flaky upstream")
def test_xpass():
    pass


@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass


def test_fail_and_teardown_error(teardown_breaks):
    assert False, "body failed"


class TestGroup:
    @pytest.mark.parametrize("n", [1, 2])
    def test_param(self, n):
        assert n == 1
