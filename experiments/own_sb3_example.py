"""Your own attention network (bag of words, dot-product attention) and your own SB3 algorithm (SAC) on the env."""
import torch
from stable_baselines3 import SAC
from torch import nn

from drga.agents.sb3_policy import SB3PolicyAdapter
from drga.baselines.protocol import AttentionNetwork, AttentionSite, NetworkEncoding, masked_softmax
from drga.config import RewardConfig
from drga.data import BatchIterator, Vocabulary, collate, encode_examples, load_dataset
from drga.envs import AttentionRetrofitEnv
from drga.tasks.classification.evaluation import evaluate


class BagOfWordsAttention(AttentionNetwork):
    def __init__(self, vocab_size: int, classes: int, dim: int = 32):
        super().__init__()
        self.embed, self.key, self.out = nn.Embedding(vocab_size, dim), nn.Parameter(torch.zeros(dim)), nn.Linear(dim, classes)

    def encode(self, batch):  # what the agent's state is built from (docs/custom-network.md)
        words, mask = self.embed(batch.tokens), batch.mask
        alpha = masked_softmax(words @ self.key, mask)
        site = AttentionSite.single(words, words, self.key.expand(batch.size, -1), mask, alpha)
        return NetworkEncoding(sites=(site,), cache={"words": words})

    def predict(self, encoding, attention):  # eqs. 10-11 from the attention it is given
        return self.out(torch.einsum("bt,btd->bd", attention[0][:, 0], encoding.cache["words"]))


torch.manual_seed(0)
splits = load_dataset("subj")
vocab = Vocabulary.build(example.tokens for example in splits.train)
(train, _), (dev, _) = (encode_examples(split[::4], vocab, max_length=50) for split in (splits.train, splits.dev))
network = BagOfWordsAttention(len(vocab), 2)
optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)
for batch in BatchIterator(train, 32, shuffle=True):  # your network, trained as you always do (one epoch here)
    optimizer.zero_grad(), (-network.log_likelihood(network(batch), batch.labels).mean()).backward(), optimizer.step()
agent = SAC("MlpPolicy", AttentionRetrofitEnv(network, train, collate), learning_starts=200, seed=0).learn(2000)
for mode in ("net-only", "with-agent"):  # SB3's policy, through the adapter, in the trainer's own evaluation
    print(mode, evaluate(network, BatchIterator(dev, 64, shuffle=False), RewardConfig(), mode, SB3PolicyAdapter(agent.policy), 0.4))
