"""`tf.queue`."""

from tensorweave.data.queues import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue
