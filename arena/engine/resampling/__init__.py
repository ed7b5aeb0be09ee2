"""The bootstrap: exact multinomial resampling, rounds run in chunks (threads or processes), one BLAS thread each."""
