// Append and consume buffers always carry a counter; DXC gives each the lowest free binding
// of its buffer's set, in declaration order (3, then 4).
AppendStructuredBuffer<uint> survivors : register(u0);
ConsumeStructuredBuffer<uint> candidates : register(u1);

cbuffer Params : register(b2)
{
    uint threshold;
    uint3 pad;
};

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    uint value = candidates.Consume();
    if (value > threshold)
    {
        survivors.Append(value);
    }
}
