"""tf.data sources and transformations beyond `data/dataset.py`: file readers (`readers`)
and `tf.data.experimental` transformations (`experimental`)."""
