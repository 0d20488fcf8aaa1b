"""The statistics every verdict rests on."""

from warp_fix.probe.stats import mad, median, noise_band, stat


def test_median_of_odd_and_even_counts():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_mad_ignores_one_slow_outlier():
    assert mad([100, 101, 99, 100, 900]) == 1


def test_noise_band_is_one_percent_when_samples_agree():
    assert noise_band(stat([1000, 1000, 1000])) == 10


def test_noise_band_is_two_mads_when_samples_scatter():
    assert noise_band(stat([1000, 1100, 900])) == 200
