import pytest
from pytest import mark

pytestmark = [pytest.mark.slow, pytest.mark.xfail(reason="module")]


class TestX:
    @pytest.mark.parametrize(
        "v",
        [pytest.param(1, id="plain"), pytest.param(2, id="meta", marks=pytest.mark.xfail(strict=True))],
    )
    def test_y(self, v):
        assert v


@mark.xfail(strict=False, reason="flaky")
async def test_x():
    pass
