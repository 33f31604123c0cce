def test_b():
    assert True
